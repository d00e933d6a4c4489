import type { SignInMethod } from '../modules/hooks.js';

/** RFC 8176's registered `amr` values: nothing else is ever recorded or reported. */
export const RFC8176_AMR = new Set([
  'face',
  'fpt',
  'geo',
  'hwk',
  'iris',
  'kba',
  'mca',
  'mfa',
  'otp',
  'pin',
  'pop',
  'pwd',
  'rba',
  'retina',
  'sc',
  'sms',
  'swk',
  'tel',
  'user',
  'vbm',
  'wia',
]);

/** The registered values of a list (an upstream's `amr`, a module's proof), in order, once each; at most 8. */
export function registeredAmr(values: readonly unknown[] | null | undefined): string[] {
  const out: string[] = [];
  for (const v of values ?? []) if (typeof v === 'string' && RFC8176_AMR.has(v) && !out.includes(v) && out.length < 8) out.push(v);
  return out;
}

/**
 * How a first factor proved itself, as RFC 8176 `amr` values: what the proof says when it says it (a
 * passkey: `hwk` or `swk`, `user`, `mfa`; an identity provider: its own `amr`), else the method's own value
 * (`pwd` for a password, `otp` for an emailed or texted code or link). A social or single-sign-on sign-in
 * whose upstream gave no `amr` records none: there is no registered value for "an identity provider said
 * so", and none is invented.
 */
export function firstFactorAmr(method: SignInMethod, proved?: readonly string[]): string[] {
  const given = registeredAmr(proved);
  if (given.length || method.startsWith('social:')) return given;
  if (method === 'password') return ['pwd'];
  if (method === 'token-login') return ['otp'];
  return [];
}

/** A second factor passed on a pending session adds its value and `mfa`. */
export function withSecondFactor(amr: readonly string[], secondFactor: 'code' | 'trusted_device'): string[] {
  // A code (an authenticator app's, a texted or mailed one, a backup code) is `otp`; a device the provider
  // trusts proved its second factor at an earlier sign-in, so only `mfa` is said.
  return registeredAmr([...amr, ...(secondFactor === 'code' ? ['otp'] : []), 'mfa']);
}

/** The stored form (space-separated, as a scope) and back. */
export const amrText = (amr: readonly string[]) => (amr.length ? amr.join(' ') : null);
/** OpenID `acr` values for a session's sign-in: one factor, or two (`two_factor_verified`). */
export const ACR_1FA = 'urn:gatehouse:acr:1fa';
export const ACR_2FA = 'urn:gatehouse:acr:2fa';

export const amrList = (text: string | null | undefined) => registeredAmr(text ? text.split(' ') : []);
