import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where mail and SMS land when no real transport is configured. */
export function outboxDir(dataDirAbs: string): string {
  return path.join(dataDirAbs, 'outbox');
}

/** A sortable, collision-free file stem: 2026-11-21T14-05-09-123Z-<8 hex>. */
export function outboxStem(): string {
  return `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
}

/** Writes one message; owner-only permissions because messages carry login links and codes. */
export async function writeOutboxFile(dir: string, name: string, content: string | Buffer): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, name);
  await writeFile(file, content, { mode: 0o600, flag: 'wx' });
  return file;
}

/** "jane@example.com" → "j***@example.com": enough to tell messages apart in logs. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

/** "+34600111222" → "+34******222". */
export function maskPhone(number: string): string {
  const s = number.replace(/\s+/g, '');
  if (s.length <= 6) return '***';
  return `${s.slice(0, 3)}${'*'.repeat(s.length - 6)}${s.slice(-3)}`;
}
