import { OAuth2Tokens } from 'arctic';
import { AppError } from '../errors/app-error.js';
import { SocialCodes, invalidToken, providerUnavailable, socialError } from './errors.js';

/** Who is called: the provider's id (for messages) and how long one call may take before answering 503. */
export interface Caller {
  id: string;
  timeoutMs: number;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  body?: string | URLSearchParams;
  /** Statuses that mean "this token is not good" (answered 401), rather than "the provider is down" (503). */
  rejectStatuses?: number[];
}

/**
 * One JSON call to a provider. Network errors, timeouts, 5xx and unreadable answers are the provider's
 * fault (503 SOCIAL_PROVIDER_UNAVAILABLE); the statuses in `rejectStatuses` refuse the token (401).
 */
export async function callProvider<T = Record<string, unknown>>(p: Caller, url: string, opts: CallOptions = {}): Promise<T> {
  const provider = p.id;
  let res: Response;
  try {
    res = await fetch(url, {
      method: opts.method ?? 'GET',
      headers: { Accept: 'application/json', 'User-Agent': 'gatehouse', ...opts.headers },
      body: opts.body,
      redirect: 'error',
      signal: AbortSignal.timeout(p.timeoutMs),
    });
  } catch {
    throw providerUnavailable(provider);
  }
  const text = await res.text().catch(() => null);
  if ((opts.rejectStatuses ?? [400, 401, 403, 404]).includes(res.status)) {
    throw invalidToken(`The ${provider} token was refused by ${provider}`);
  }
  if (!res.ok || text === null) throw providerUnavailable(provider);
  try {
    const data = JSON.parse(text) as unknown;
    if (data === null || typeof data !== 'object') throw new Error('not an object');
    return data as T;
  } catch {
    throw providerUnavailable(provider);
  }
}

export type ClientAuth = 'basic' | 'post';

/**
 * The authorization-code exchange (RFC 6749 §4.1.3 with PKCE). A 400/401 answer means the code (or
 * verifier) is not good: 400 SOCIAL_INVALID_CODE; anything else failing is the provider's: 503.
 */
export async function exchangeCode(
  caller: Caller,
  tokenUrl: string,
  p: { clientId: string; clientSecret: string | null; auth: ClientAuth; code: string; verifier: string; redirectUri: string },
): Promise<OAuth2Tokens> {
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: p.code, redirect_uri: p.redirectUri, code_verifier: p.verifier });
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (p.clientSecret !== null && p.auth === 'basic') {
    headers.Authorization = `Basic ${Buffer.from(`${encodeURIComponent(p.clientId)}:${encodeURIComponent(p.clientSecret)}`).toString('base64')}`;
  } else {
    body.set('client_id', p.clientId);
    if (p.clientSecret !== null) body.set('client_secret', p.clientSecret);
  }
  try {
    const data = await callProvider(caller, tokenUrl, { method: 'POST', headers, body, rejectStatuses: [400, 401] });
    // GitHub answers a bad code with 200 and an error field.
    if (typeof data.error === 'string' || typeof data.access_token !== 'string') throw invalidCode(caller.id);
    return new OAuth2Tokens(data);
  } catch (err) {
    if (err instanceof AppError && err.code === SocialCodes.INVALID_TOKEN) throw invalidCode(caller.id);
    throw err;
  }
}

const invalidCode = (provider: string) => socialError(400, SocialCodes.INVALID_CODE, `The ${provider} authorization code was refused; start the sign-in again`);

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
