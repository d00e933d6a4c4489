import type { Config } from '../config/schema.js';

type LinkConfig = Pick<Config, 'resetUrlAllowlist' | 'appUrl' | 'publicBaseUrl'>;
type PageConfig = Pick<Config, 'appUrl' | 'publicBaseUrl' | 'webPages'>;

// Never a link target, whatever the allow-list says.
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:']);
const WEB_SCHEMES = new Set(['http:', 'https:']);

function parse(value: string): URL | null {
  try {
    return new URL(value.trim());
  } catch {
    return null;
  }
}

/**
 * Whether a client-supplied link base (resetUrl, redirect_url) may carry a token. Web URLs must share
 * an origin with RESET_URL_ALLOWLIST, APP_URL or PUBLIC_URL; app deep links (myapp://reset) must start
 * with an allow-listed entry of their scheme. Anything else is refused, so a request can never make
 * Gatehouse mail a token to a page the operator did not choose.
 */
export function isAllowedLinkBase(candidate: string, config: LinkConfig): boolean {
  const url = parse(candidate);
  if (!url || FORBIDDEN_SCHEMES.has(url.protocol) || url.username || url.password) return false;
  const entries = [...config.resetUrlAllowlist, config.appUrl ?? '', config.publicBaseUrl].filter(Boolean);
  if (WEB_SCHEMES.has(url.protocol)) {
    return entries.some((e) => {
      const allowed = parse(e);
      return !!allowed && WEB_SCHEMES.has(allowed.protocol) && allowed.origin === url.origin;
    });
  }
  const given = url.href.toLowerCase();
  return entries.some((e) => {
    const allowed = parse(e);
    return !!allowed && allowed.protocol === url.protocol && given.startsWith(allowed.href.toLowerCase());
  });
}

/** The client's link base when allowed, else the server default. */
export function chooseLinkBase(candidate: string | undefined | null, fallback: string, config: LinkConfig): string {
  return candidate && isAllowedLinkBase(candidate, config) ? candidate.trim() : fallback;
}

/** Appends `token=` (and any other parameters) to a link base, keeping its own query and fragment. */
export function withParams(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/** The front-end base for pages such as /reset-password (APP_URL, else PUBLIC_URL). */
export const frontEndBase = (config: Pick<Config, 'appUrl' | 'publicBaseUrl'>) => (config.appUrl ?? config.publicBaseUrl).replace(/\/+$/, '');

/**
 * Where a mailed link to the reset page goes: Gatehouse's own hosted page (src/web) when WEB_PAGES is
 * on, else the front end's APP_URL/reset-password as before.
 */
export const resetPageBase = (config: PageConfig) =>
  config.webPages ? `${config.publicBaseUrl.replace(/\/+$/, '')}/reset-password` : `${frontEndBase(config)}/reset-password`;

/**
 * Where a security notice's "reset your password" link goes (it carries no token): the hosted
 * /forgot-password page, which mails one, when WEB_PAGES is on (its /reset-password without a token is
 * a dead link); else the front end's APP_URL/reset-password as before.
 */
export const noticeResetUrl = (config: PageConfig) =>
  config.webPages ? `${config.publicBaseUrl.replace(/\/+$/, '')}/forgot-password` : `${frontEndBase(config)}/reset-password`;
