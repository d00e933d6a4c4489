/**
 * Keys that may hold a secret: a details object never carries a password, code, token, secret, session
 * id or cookie, whatever a writer passes (the key is dropped, and the writer logged).
 */
const SECRET_KEY = /(^|_)(password|passcode|code|codes|token|tokens|secret|session_?id|sid|otp|cookie|hash|key)($|_)/i;
const MAX_DEPTH = 4;
const MAX_STRING = 500;
const MAX_KEYS = 40;

/** A copy of `details` fit to store: secret-looking keys dropped, strings and nesting bounded. */
export function cleanDetails(details: Record<string, unknown> | undefined, dropped: string[] = []): Record<string, unknown> {
  return (clean(details ?? {}, 0, dropped, '') as Record<string, unknown> | undefined) ?? {};
}

function clean(v: unknown, depth: number, dropped: string[], at: string): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'number') return Number.isFinite(v) || typeof v !== 'number' ? v : null;
  if (typeof v === 'string') return v.length > MAX_STRING ? `${v.slice(0, MAX_STRING)}…` : v;
  if (v instanceof Date) return v.toISOString();
  if (depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(v)) return v.slice(0, MAX_KEYS).map((x) => clean(x, depth + 1, dropped, at) ?? null);
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>).slice(0, MAX_KEYS)) {
      const path = at ? `${at}.${k}` : k;
      // camelCase keys too (newPassword, accessToken, apiKey): split into words before matching.
      if (SECRET_KEY.test(k.replace(/([a-z0-9])([A-Z])/g, '$1_$2'))) {
        dropped.push(path);
        continue;
      }
      const c = clean(x, depth + 1, dropped, path);
      if (c !== undefined) out[k] = c;
    }
    return out;
  }
  return undefined;
}
