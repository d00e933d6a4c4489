import type { OAuth2Tokens } from 'arctic';
import type { ClientAuth } from './provider-http.js';
import type { EndpointKey, Endpoints, ProviderId, ProviderSettings } from './settings.js';

/** What a provider tells about its user, mapped to one shape. */
export interface ProviderProfile {
  /** The provider's stable user id (`sub`, GitHub's numeric id, …), as a string. */
  id: string;
  email: string | null;
  /** True only when the provider itself says it verified this address. */
  emailVerified: boolean;
  name: string | null;
  lastName: string | null;
  picture: string | null;
  /** The identity provider's own `amr` (an OpenID provider's id_token), when it gave one: the session records its registered values. */
  amr?: string[];
}

/** A configured provider: its settings with every endpoint resolved. */
export interface ProviderRuntime {
  id: ProviderId;
  settings: ProviderSettings;
  /** How long one call to the provider may take before the sign-in answers 503. */
  timeoutMs: number;
  url(key: EndpointKey): string;
  /** The client secret to present at the token endpoint (Apple's is a fresh ES256 JWT). */
  clientSecret(): Promise<string | null>;
}

/** The web callback's inputs beyond the tokens (Apple posts the user's name once, as form field `user`). */
export interface CallbackExtras {
  userJson?: string;
}

/**
 * One identity provider. OpenID providers (`oidc: true`) get a nonce and are read from a verified
 * id_token; the others from their user APIs. Mobile sign-in is by id_token (OpenID providers) or by an
 * access token that the provider confirms was issued to our app (`fromAccessToken`).
 */
export interface SocialProvider {
  id: ProviderId;
  name: string;
  oidc: boolean;
  defaultEndpoints: Endpoints;
  /** Endpoints that must be known (by default or by override) for the provider to work. */
  requiredEndpoints: EndpointKey[];
  defaultScopes: string[];
  clientAuth: ClientAuth;
  /** Extra authorization parameters (Apple: response_mode=form_post). */
  authParams?(): Record<string, string>;
  /** The nonce sent, and found in the id_token, is the SHA-256 of the flow's nonce (Apple). */
  hashNonce?: boolean;
  fromCode(p: ProviderRuntime, tokens: OAuth2Tokens, nonce: string, extras: CallbackExtras): Promise<ProviderProfile>;
  fromIdToken?(p: ProviderRuntime, idToken: string, nonce: string | undefined): Promise<ProviderProfile>;
  fromAccessToken?(p: ProviderRuntime, accessToken: string): Promise<ProviderProfile>;
  /** A client secret made per request instead of the configured one (Apple's ES256 JWT). */
  makeClientSecret?(settings: ProviderSettings, issuer: string): Promise<string>;
  /** Settings problems for `doctor` (empty when fine). */
  check?(settings: ProviderSettings): string[];
}

export const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : typeof v === 'number' ? String(v) : null);

/** Providers spell booleans as booleans or, Apple, as strings. */
export const truthy = (v: unknown): boolean => v === true || v === 'true';

/** "Ada King Lovelace" → first "Ada", last "King Lovelace": for providers that only have one display name. */
export function splitName(full: string | null): { first: string | null; last: string | null } {
  const [first, ...rest] = (full ?? '').split(/\s+/).filter(Boolean);
  return { first: first ?? null, last: rest.length ? rest.join(' ') : null };
}

export const requireSecret = (s: ProviderSettings, name: string): string[] => (s.client_secret ? [] : [`${name}: client_secret is required for the web flow`]);
