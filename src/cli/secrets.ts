import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CliError } from './errors.js';

/** How long a password `init` or `user create` made up works (ASVS 6.4.1); any password set since clears the end. */
export const GENERATED_PASSWORD_TTL_MS = 24 * 3_600_000;

/** 32 random bytes, base64url: the generated BRIDGE_VALIDATION_SECRET and COOKIE_SECRET. */
export const generateSecret = () => randomBytes(32).toString('base64url');

/** A password shown once to the operator: 144 random bits in 24 URL-safe characters. */
export const generatePassword = () => randomBytes(18).toString('base64url');

// Only the line ending a shell or editor appends is dropped; other whitespace may be intended.
const chompNewline = (s: string) => s.replace(/\r?\n$/, '');

/** Reads a password piped on stdin (`--password-stdin`). */
export async function readPasswordStdin(stdin: NodeJS.ReadableStream & { isTTY?: boolean }, flag: string): Promise<string> {
  if (stdin.isTTY) throw new CliError(`${flag} reads the password from a pipe`, `echo "$PASSWORD" | gatehouse ... ${flag}`, 2);
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const value = chompNewline(Buffer.concat(chunks).toString('utf8'));
  if (!value) throw new CliError(`${flag}: nothing was read from stdin`, undefined, 2);
  return value;
}

/** Reads a password from a file (`--admin-password-file`). */
export async function readPasswordFile(file: string, flag: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, undefined, 2);
  }
  const value = chompNewline(text);
  if (!value) throw new CliError(`${flag}: ${file} is empty`, undefined, 2);
  return value;
}
