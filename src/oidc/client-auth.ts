import type { AdapterPayload, OidcAdapter } from './adapter.js';
import { CLIENT_ASSERTION_ALGS } from './client-jwks.js';

/**
 * How clients authenticate at the token, introspection and revocation endpoints (docs/oidc.md "Clients"):
 * `none` (public), `client_secret_basic` / `client_secret_post` (a secret kept as its SHA-256), and
 * `private_key_jwt` (RFC 7523 §2.2: an assertion signed with a key whose public half was registered).
 * `client_secret_jwt` is not offered: its HMAC key is the secret itself, which Gatehouse does not keep.
 */
export const CLIENT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;

/** oidc-provider publishes the token endpoint's methods only; introspection and revocation take the same (RFC 8414 §2). */
export const CLIENT_AUTH_DISCOVERY = {
  introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  introspection_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
  revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
  revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGS],
};

/** What a client that used another method is told: the method it is registered for. */
export function registeredFor(method: string, used: string): string {
  const hint = used === 'client_secret_jwt' ? ' (client_secret_jwt is not offered: Gatehouse keeps only a hash of a secret)' : '';
  return `client authentication failed: the client is registered to authenticate with ${method}, not ${used}${hint}`;
}

type ErrorsModule = Record<string, new (detail?: string) => Error>;

/** compareClientSecret's refusal of the other secret method, with the registered one in error_description. */
export function wrongSecretMethod(errors: ErrorsModule, method: string, used: string): Error {
  const err: Error & { error_description?: string } = new errors.InvalidClientAuth(`the client is registered to authenticate with ${method}, not ${used}`);
  err.error_description = registeredFor(method, used);
  return err;
}

/** The method a request used, read as oidc-provider reads it (client_auth.js, authenticateClient). */
function methodUsed(ctx: { headers: Record<string, unknown>; oidc: { params?: Record<string, unknown> } }): string {
  const params = ctx.oidc.params ?? {};
  if (typeof params.client_secret === 'string') return 'client_secret_post';
  if (typeof ctx.headers.authorization === 'string') return 'client_secret_basic';
  if (typeof params.client_assertion === 'string') {
    try {
      const header = JSON.parse(Buffer.from(params.client_assertion.split('.')[0], 'base64url').toString('utf8')) as { alg?: unknown };
      return typeof header.alg === 'string' && header.alg.startsWith('HS') ? 'client_secret_jwt' : 'private_key_jwt';
    } catch {
      return 'a client assertion';
    }
  }
  return 'none (no client authentication was sent)';
}

/** oidc-provider's own words when the method a request used is not the client's (lib/shared/client_auth.js). */
const MISMATCH = 'the provided authentication mechanism does not match the registered client authentication method';

/**
 * oidc-provider refuses a method other than the registered one with `invalid_client` and the generic
 * "client authentication failed", keeping why in `error_detail`, and offers no hook before that check.
 * Its error events are emitted right after the error body is set, in the same tick, so this listener (on
 * grant.error, introspection.error, revocation.error) rewrites the description to name the registered method.
 * A client assertion signed with HS256 on a private_key_jwt client (a `client_secret_jwt` attempt) is told the same.
 * oidc-private-key-jwt.test.ts pins the answers, so a library upgrade that changes the words fails there.
 */
export function explainClientAuthFailure(ctx: unknown, err: unknown): void {
  const c = ctx as { headers: Record<string, unknown>; body?: unknown; oidc: { client?: { clientAuthMethod?: string }; params?: Record<string, unknown> } };
  const e = err as { error?: string; error_detail?: string };
  const method = c.oidc?.client?.clientAuthMethod;
  if (e?.error !== 'invalid_client' || !method || !c.body || typeof c.body !== 'object') return;
  const used = methodUsed(c);
  const mismatch = e.error_detail === MISMATCH || (e.error_detail === 'alg mismatch' && used === 'client_secret_jwt');
  if (!mismatch) return;
  const body = c.body as Record<string, unknown>;
  const description = registeredFor(method, used);
  // The JSON answer carries error_description; one rendered for a browser (renderError) carries it as `error`.
  if ('error_description' in body) body.error_description = description;
  else if (body.success === false) body.error = description;
}

/** How long a claimed jti is held before the winner's own save sets its real expiry (an assertion's `exp` plus the clock tolerance). */
const CLAIM_HOLD_SEC = 600;

/**
 * ReplayDetection's find, made single use under concurrency. oidc-provider's `ReplayDetection.unique` (a client
 * assertion's or a DPoP proof's jti) finds, then saves: two requests at once with one jti would both find nothing.
 * Here the find claims the id in one step (an insert where none is live, or Redis SET NX): the one call that
 * claimed it is told "not found" and goes on to save it with its real expiry; every other is told it exists,
 * so oidc-provider refuses it with its own error ("client assertion tokens must only be used once").
 */
export async function claimReplay(adapter: OidcAdapter, id: string, now: number): Promise<AdapterPayload | undefined> {
  if (!adapter.claim) return adapter.find(id);
  const held: AdapterPayload = { jti: id, kind: 'ReplayDetection', iat: now, exp: now + CLAIM_HOLD_SEC };
  return (await adapter.claim(id, held, CLAIM_HOLD_SEC)) ? undefined : held;
}
