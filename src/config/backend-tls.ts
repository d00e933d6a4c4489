import { isIP } from 'node:net';

/** PostgreSQL's sslmode values (and pg's `ssl=true`) under which the connection is encrypted. */
const TLS_MODES = new Set(['require', 'verify-ca', 'verify-full', 'no-verify']);

/** A host on this machine: a loopback name or address, or a Unix socket directory. */
function isLocalHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === '' || h.startsWith('/') || h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}

/**
 * Why a database or Redis URL would carry credentials and data in clear over a network (ASVS 12.3.1), or null:
 * a PostgreSQL URL to a host that is not this machine without `sslmode=require` (or verify-ca, verify-full,
 * no-verify, `ssl=true`), or a `redis://` URL to such a host (`rediss://` is TLS). SQLite is a file.
 */
export function plaintextBackend(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const scheme = u.protocol.slice(0, -1);
  if (scheme === 'postgres' || scheme === 'postgresql') {
    const host = u.searchParams.get('host') ?? decodeURIComponent(u.hostname);
    if (isLocalHost(host)) return null;
    const mode = (u.searchParams.get('sslmode') ?? '').toLowerCase();
    const ssl = (u.searchParams.get('ssl') ?? '').toLowerCase();
    if (TLS_MODES.has(mode) || ssl === 'true' || ssl === '1') return null;
    return `connects to ${host} unencrypted: add ?sslmode=require (or verify-full), or set ALLOW_PLAINTEXT_BACKENDS=true if the network between them is private`;
  }
  if (scheme === 'redis') {
    const host = decodeURIComponent(u.hostname);
    if (isLocalHost(host)) return null;
    return `connects to ${host} unencrypted: use rediss:// (TLS), or set ALLOW_PLAINTEXT_BACKENDS=true if the network between them is private`;
  }
  return null;
}
