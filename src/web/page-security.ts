import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Config } from '../config/schema.js';
import { parseCookies } from '../http/request-context.js';

/**
 * The pages' defences: a CSP with a fresh nonce per response, a CSRF token on every form (signed
 * double-submit, tied to a pre-session cookie), cookie attributes, and the one rule for `return_to`.
 */

/** The pre-session cookie a CSRF token is bound to (random, HttpOnly; never the session). */
export const CSRF_COOKIE = 'gh_csrf';
/**
 * The console's own binding cookie (issue 27): SameSite=Strict, so a console form post made from any
 * other site arrives without it and is refused, even with a token that leaked.
 */
export const CONSOLE_CSRF_COOKIE = 'gh_console';
/** Which binding a token is tied to: the hosted pages' (Lax) or the console's (Strict). */
export type CsrfKind = 'page' | 'console';
const BINDINGS: Record<CsrfKind, { cookie: string; sameSite: 'lax' | 'strict'; prefix: string }> = {
  page: { cookie: CSRF_COOKIE, sameSite: 'lax', prefix: '' },
  console: { cookie: CONSOLE_CSRF_COOKIE, sameSite: 'strict', prefix: 'console:' },
};
/** The form field carrying the token. */
export const CSRF_FIELD = '_csrf';

type SecurityConfig = Pick<Config, 'publicBaseUrl' | 'socialRedirectAllowlist' | 'cookieSecret' | 'bridgeSecret'>;

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether the pages' cookies (session, CSRF bindings) take the `__Host-` prefix: when PUBLIC_URL is https
 * (ASVS 3.3.1; Gatehouse sets no cookie Domain). The plain names are still read for one release, and a
 * page answer moves a cookie found under one to the prefixed name (docs/sessions.md, "Cookie names").
 */
export function hostPrefixed(config: Pick<Config, 'publicBaseUrl'>): boolean {
  return /^https:/i.test(config.publicBaseUrl.trim());
}

/** A page cookie's name for this configuration: `__Host-` + `base` when hostPrefixed, else `base`. */
export const pageCookieName = (config: Pick<Config, 'publicBaseUrl'>, base: string): string => (hostPrefixed(config) ? `__Host-${base}` : base);

/** A cookie from the prefixed name first, else the plain one (a `__Host-` cookie cannot be planted by a sibling host). */
const readPrefixed = (jar: Record<string, string>, base: string): string | undefined => jar[`__Host-${base}`] || jar[base] || undefined;

/** Secure on every cookie the pages set, except when the public URL is plain http on this machine. */
export function webCookieSecure(config: Pick<Config, 'publicBaseUrl'>): boolean {
  try {
    const u = new URL(config.publicBaseUrl);
    return !(u.protocol === 'http:' && LOCAL_HOSTS.has(u.hostname));
  } catch {
    return true;
  }
}

export const newNonce = (): string => randomBytes(18).toString('base64');

/** Origins of SOCIAL_REDIRECT_ALLOWLIST (the one list of places a sign-in may send the browser back to). */
function allowedOrigins(config: SecurityConfig): string[] {
  const out: string[] = [];
  for (const o of config.socialRedirectAllowlist) {
    try {
      const u = new URL(o);
      if (u.protocol === 'https:' || u.protocol === 'http:') out.push(u.origin);
    } catch {
      /* not a URL: matches nothing */
    }
  }
  return out;
}

/**
 * The page CSP: scripts and styles only with this response's nonce (plus this origin's stylesheets),
 * nothing framed, forms posted here or to where a sign-in may return (Chromium applies form-action
 * to the redirect after a post).
 */
export function pageCsp(nonce: string, config: SecurityConfig, formTargets: string[] = []): string {
  const forms = [...new Set(["'self'", ...allowedOrigins(config), ...formTargets])].join(' ');
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    `form-action ${forms}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** The key CSRF tokens are signed with: COOKIE_SECRET (or the bridge secret), else one per process. */
export function csrfKey(config: SecurityConfig): Buffer {
  const secret = config.cookieSecret ?? config.bridgeSecret;
  return secret ? createHmac('sha256', secret).update('gatehouse web csrf v1').digest() : randomBytes(32);
}

const sign = (key: Buffer, binding: string) => createHmac('sha256', key).update(binding).digest('base64url');

/**
 * The token for this browser: HMAC of its pre-session cookie (set here when missing). A cross-site
 * page can neither read the cookie nor compute the signature, so it cannot forge the field.
 */
export function csrfTokenFor(req: Request, res: Response, key: Buffer, config: Pick<Config, 'publicBaseUrl'>, kind: CsrfKind = 'page'): string {
  const b = BINDINGS[kind];
  const jar = parseCookies(req.headers.cookie);
  const name = pageCookieName(config, b.cookie);
  const opts = { httpOnly: true, secure: webCookieSecure(config), sameSite: b.sameSite, path: '/' } as const;
  let binding = readPrefixed(jar, b.cookie);
  if (!binding || !/^[A-Za-z0-9_-]{32,64}$/.test(binding)) {
    binding = randomBytes(24).toString('base64url');
    res.cookie(name, binding, opts);
  } else if (name !== b.cookie && jar[name] === undefined) {
    // Found under the old name: the same value moves to the prefixed one (a form already open stays valid).
    res.cookie(name, binding, opts);
    res.clearCookie(b.cookie, opts);
  }
  return sign(key, b.prefix + binding);
}

/**
 * A fresh binding when a session begins or ends on a page (sign-in, the second step, registration,
 * sign-out): the pages' cookie gets a new random value and the console's is dropped (the next console page
 * makes one), so a token read or planted before (a cookie set by a sibling subdomain, a form left open)
 * is refused after. Always followed by a redirect: the next page signs its forms with the new value.
 */
export function rotateCsrfBinding(res: Response, config: Pick<Config, 'publicBaseUrl'>): void {
  const secure = webCookieSecure(config);
  const page = BINDINGS.page;
  const name = pageCookieName(config, page.cookie);
  res.cookie(name, randomBytes(24).toString('base64url'), { httpOnly: true, secure, sameSite: page.sameSite, path: '/' });
  if (name !== page.cookie) res.clearCookie(page.cookie, { httpOnly: true, secure, sameSite: page.sameSite, path: '/' });
  const console = BINDINGS.console;
  for (const n of new Set([console.cookie, pageCookieName(config, console.cookie)]))
    res.clearCookie(n, { httpOnly: true, secure, sameSite: console.sameSite, path: '/' });
}

/** Whether a form post carries the token of the cookie it came with. Constant-time. */
export function csrfValid(req: Request, key: Buffer, kind: CsrfKind = 'page'): boolean {
  const b = BINDINGS[kind];
  const binding = readPrefixed(parseCookies(req.headers.cookie), b.cookie);
  const given = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
  if (!binding || typeof given !== 'string' || given.length > 100) return false;
  const want = Buffer.from(sign(key, b.prefix + binding));
  const got = Buffer.from(given);
  return got.length === want.length && timingSafeEqual(got, want);
}

export type ReturnTo = { ok: true; to: string | null } | { ok: false };

/**
 * Where a page may send the browser after signing in: a same-origin relative path (`/x`, never `//x`
 * or `/\x`), or an absolute URL on an origin of SOCIAL_REDIRECT_ALLOWLIST or this server's own.
 * Absent: `{ ok: true, to: null }`; anything else is refused.
 */
export function checkReturnTo(raw: unknown, config: SecurityConfig): ReturnTo {
  if (raw === undefined || raw === null || raw === '') return { ok: true, to: null };
  if (typeof raw !== 'string' || raw.length > 2000 || /[\u0000-\u001f\u007f\\]/.test(raw)) return { ok: false };
  if (raw.startsWith('/')) return raw.startsWith('//') ? { ok: false } : { ok: true, to: raw };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { ok: false };
  }
  if (!/^https?:$/.test(u.protocol) || u.username || u.password) return { ok: false };
  let own: string | null = null;
  try {
    own = new URL(config.publicBaseUrl).origin;
  } catch {
    /* no own origin */
  }
  return u.origin === own || allowedOrigins(config).includes(u.origin) ? { ok: true, to: u.toString() } : { ok: false };
}

/**
 * A second check on form posts, after the token: when the browser names the post's origin, it must
 * be this server's. (`Origin: null`, which a no-referrer policy can give, leaves the token alone to decide.)
 */
export function trustedFormOrigin(req: Request, config: Pick<Config, 'publicBaseUrl'>): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin === '' || origin === 'null') return true;
  // The address the browser used (behind a proxy, as `trust proxy` reads it) or the configured public URL.
  if (origin === `${req.protocol}://${req.get('host') ?? ''}`) return true;
  try {
    return new URL(config.publicBaseUrl).origin === origin;
  } catch {
    return false;
  }
}
