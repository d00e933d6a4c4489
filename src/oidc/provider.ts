import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { sendPage, type OidcPage, type SourceCtx } from './pages.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { OUTAGE_BODY } from '../errors/app-error.js';
import { HASHED_IDS, withHashedIds, type OidcAdapter } from './adapter.js';
import { secretMatches, type ClientStore } from './clients.js';
import type { ResourceStore } from './resources.js';
import type { PrivateJwk } from './keys.js';
import { routeProviderNotices } from './notices.js';
import { DEVICE_CODE_TTL, deviceFlowFeature, devicePolling } from './device-flow.js';
import type { Cache } from '../cache/cache.js';
import { claimReplay, CLIENT_AUTH_DISCOVERY, CLIENT_AUTH_METHODS, explainClientAuthFailure, wrongSecretMethod } from './client-auth.js';
import { CLIENT_ASSERTION_ALGS } from './client-jwks.js';
import { clientMetadataConfig, type OutboundOptions } from './client-metadata.js';

import {
  ACR_1FA,
  ACR_2FA,
  apiTtlOr,
  claimsOf,
  clientAdapter,
  INTERACTION_PATH,
  MAX_SIGNED_TTL,
  OIDC_CLAIMS,
  OIDC_LIMIT_CLASSES,
  OIDC_PREFIX,
  OIDC_ROUTES,
  OIDC_SCOPE_NAMES,
  TTL,
} from './provider-config.js';

// Re-exported: the HTTP side, the limits and the CLI import them from here.
export { ACR_1FA, ACR_2FA, claimsOf, INTERACTION_PATH, MAX_SIGNED_TTL, OIDC_CLAIMS, OIDC_LIMIT_CLASSES, OIDC_PREFIX, OIDC_ROUTES, OIDC_SCOPE_NAMES, TTL };

/** The parts of the provider's session (oidc-provider's Session model) that binding it reads and changes. */
export interface BindableSession {
  uid: string;
  accountId?: string;
  authorizations?: Record<string, unknown>;
}

export interface ProviderDeps {
  issuer: string;
  keys: PrivateJwk[];
  /** How long an authorization code lives, in seconds (OIDC_CODE_TTL_SECONDS; TTL.AuthorizationCode when absent). */
  codeTtl?: number;
  /** A secret of the server's (COOKIE_SECRET, else BRIDGE_VALIDATION_SECRET): the provider's cookie keys derive from it. */
  secret: string;
  adapterFor(model: string): OidcAdapter;
  clients: ClientStore;
  /** The registered APIs (resource servers): a client asks tokens only for those on its allow-list. */
  resources: Pick<ResourceStore, 'find'>;
  /** A live, not disabled, not deleted user, else null. */
  findUser(id: string): Promise<UserRecord | null>;
  /** The Gatehouse session behind a request's cookie (a full one; pending two-factor reads as none). */
  gatehouseSession(req: IncomingMessage): Promise<{ userId: string; sessionId: string } | null>;
  /** Binds the provider's session to the request's Gatehouse session (oidc.ts, `bindSession`). */
  bindSession(session: BindableSession, gatehouse: { userId: string; sessionId: string }): Promise<void>;
  /** The consent remembered for a user and a third-party client. */
  consentGrant(accountId: string, clientId: string): Promise<string | null>;
  onEvent(event: string, ctx: unknown, detail: Record<string, unknown>): void;
  /** Where oidc-provider's own NOTICE and WARNING lines go (it writes them with console.info / console.warn). */
  notice(level: 'info' | 'warn', message: string): void;
  /** Whether a client spent its budget of failed authentications (then even the right secret is refused). */
  clientAuthBlocked(clientId: string): Promise<boolean>;
  /** An RP-initiated logout tells a client of it through the outbox (back-channel logout), not by calling it in the request. */
  backchannelLogout(notice: { clientId: string; sub: string; sid: string }): Promise<void>;
  /** Where the device flow keeps each pending device code's polling pace (the shared cache). */
  pollCache: Pick<Cache, 'get' | 'set'>;
  /** Runs after a successful RP-initiated logout, inside the request: ends the Gatehouse session. */
  endGatehouseSession(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The end-session confirmation and the signed-out page, in the language of the request's user or browser. */
  renderLogout(form: string, client: { name: string | null; keepsSession: boolean; returnTo: string | null }, req: IncomingMessage): Promise<OidcPage>;
  renderLoggedOut(clientName: string | null, req: IncomingMessage): Promise<OidcPage>;
  /** Client ID Metadata Documents (OIDC_CLIENT_METADATA_DOCUMENTS; src/oidc/client-metadata.ts), and the rules of every outbound fetch. */
  clientMetadata?: OutboundOptions & { enabled: boolean };
}

export const cookieKey = (secret: string, purpose: string) => Buffer.from(hkdfSync('sha256', secret, 'gatehouse-oidc', purpose, 32)).toString('base64url');

/** A CSRF token for a form of one interaction (bound to its uid, keyed by the server's secret). */
export function interactionCsrf(secret: string, uid: string): string {
  return createHmac('sha256', cookieKey(secret, 'csrf')).update(uid).digest('base64url');
}
export function checkInteractionCsrf(secret: string, uid: string, token: unknown): boolean {
  if (typeof token !== 'string') return false;
  const a = Buffer.from(interactionCsrf(secret, uid));
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * oidc-provider configured as issue 25 asks: code flow only, PKCE S256 required (of every client but a confidential one registered without),
 * refresh tokens rotated (reuse revokes the grant), client credentials, userinfo, JWKS, revocation,
 * introspection, RP-initiated logout; JWT access tokens (RFC 9068) for a resource indicator.
 */
export async function buildProvider(deps: ProviderDeps): Promise<Provider> {
  // Loaded on first use, not with the app: oidc-provider prints a warning on Node 20 (the quick test tier),
  // which every CLI command would otherwise show; the shipped runtime (Node 24) is quiet.
  routeProviderNotices(deps.notice);
  const { default: ProviderClass, interactionPolicy, errors } = await import('oidc-provider');
  const { Check } = interactionPolicy;
  const policy = interactionPolicy.base();
  // The provider's own session follows Gatehouse's: no Gatehouse session (signed out, revoked, another
  // user, a pending second factor) means signing in again.
  // Non-null: oidc-provider's base policy always has its 'login' prompt.
  policy.get('login')!.checks.add(
    new Check('gatehouse_session', 'The Gatehouse session ended', async (ctx: { req: IncomingMessage; oidc: { session: { accountId?: string } } }) => {
      const accountId = ctx.oidc.session.accountId;
      if (!accountId) return Check.NO_NEED_TO_PROMPT;
      const s = await deps.gatehouseSession(ctx.req);
      return s?.userId === accountId ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT;
    }),
  );

  const adapters = new Map<string, OidcAdapter>();
  const adapterOf = (name: string) => {
    let a = adapters.get(name);
    if (!a)
      adapters.set(
        name,
        (a = name === 'Client' ? clientAdapter(deps.clients) : HASHED_IDS.has(name) ? withHashedIds(deps.adapterFor(name)) : deps.adapterFor(name)),
      );
    return a;
  };
  /**
   * A consume that lost (another request, on this instance or another, consumed the artefact first, or it
   * was revoked meanwhile) is a replay: the grant goes, with every token it issued (the winner's too,
   * whenever they are saved: a token whose grant is gone is refused by userinfo, introspection and the
   * refresh grant), and the request gets the answer oidc-provider gives a replay it sees itself.
   * oidc-provider's adapter contract has consume return nothing, so this is the one place that checks.
   */
  async function lostConsume(model: string, id: string): Promise<never> {
    const found = await adapterOf(model).find(id);
    const grantId = typeof found?.grantId === 'string' ? found.grantId : null;
    if (grantId) {
      // The database half deletes every model's artefacts of the grant in one statement (any model's adapter
      // does: AccessToken's lives there on every backend); the Redis half holds only codes, which are found
      // through their grant (gone now).
      await Promise.all([adapterOf('AccessToken').revokeByGrantId(grantId), adapterOf('Grant').destroy(grantId)]);
      const ctx = ProviderClass.ctx;
      if (ctx) provider.emit('grant.revoked', ctx, grantId);
    }
    switch (model) {
      case 'RefreshToken':
        // The words oidc-provider uses for a replay it sees itself (the audit's reuse detection reads them).
        throw new errors.InvalidGrant('refresh token already used');
      case 'AuthorizationCode':
        throw new errors.InvalidGrant('authorization code already consumed');
      case 'DeviceCode':
        throw new errors.InvalidGrant('device code already consumed');
      case 'PushedAuthorizationRequest':
        throw new errors.InvalidRequestUri('request_uri is invalid, expired, or was already used');
      default:
        throw new errors.InvalidGrant(`${model} already consumed`);
    }
  }
  class Adapter {
    #a: OidcAdapter;
    #name: string;
    constructor(name: string) {
      this.#a = adapterOf(name);
      this.#name = name;
    }
    upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
      // A device code's row outlives it by its own lifetime: a device polling late reads it and gets
      // expired_token (RFC 8628 §3.5; the model's `exp` decides), not invalid_grant for a code never seen.
      const keep = this.#name === 'DeviceCode' && expiresIn ? expiresIn + DEVICE_CODE_TTL : expiresIn;
      return this.#a.upsert(id, payload, keep);
    }
    find(id: string) {
      return this.#name === 'ReplayDetection' ? claimReplay(this.#a, id, Math.floor(Date.now() / 1000)) : this.#a.find(id);
    }
    findByUserCode(code: string) {
      return this.#a.findByUserCode(code);
    }
    findByUid(uid: string) {
      return this.#a.findByUid(uid);
    }
    async consume(id: string) {
      if (!(await this.#a.consume(id))) await lostConsume(this.#name, id);
    }
    destroy(id: string) {
      return this.#a.destroy(id);
    }
    revokeByGrantId(grantId: string) {
      return this.#a.revokeByGrantId(grantId);
    }
  }
  const cimd = clientMetadataConfig(deps.clientMetadata?.enabled === true, { allowPrivate: false, ...deps.clientMetadata });
  const provider = new ProviderClass(deps.issuer, {
    adapter: Adapter,
    // Every fetch the provider makes goes by the webhook address rules (src/oidc/client-metadata.ts).
    fetch: cimd.fetch,
    fetchResponseBodyLimits: cimd.fetchResponseBodyLimits,
    clients: [],
    jwks: { keys: deps.keys },
    cookies: { keys: [cookieKey(deps.secret, 'cookies')] },
    routes: OIDC_ROUTES,
    responseTypes: ['code'],
    scopes: OIDC_SCOPE_NAMES,
    claims: OIDC_CLAIMS,
    acrValues: [ACR_1FA, ACR_2FA],
    extraClientMetadata: { properties: ['first_party', 'keep_session_on_logout', 'pkce_required', 'allowed_resources'] },
    // PKCE (S256 only: oidc-provider offers no `plain`) for every client; a confidential legacy client may be
    // registered without it (`oidc client add --no-pkce`), which the doctor lists. A public client never.
    pkce: {
      required: (_ctx: unknown, client: { clientAuthMethod: string; pkce_required?: boolean }) =>
        client.clientAuthMethod === 'none' || client.pkce_required !== false,
    },
    // private_key_jwt with RS256, PS256 or ES256 assertions; client_secret_jwt is not offered (src/oidc/client-auth.ts).
    clientAuthMethods: [...CLIENT_AUTH_METHODS],
    discovery: CLIENT_AUTH_DISCOVERY,
    enabledJWA: {
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      userinfoSigningAlgValues: ['RS256', 'ES256'],
      introspectionSigningAlgValues: ['RS256', 'ES256'],
      authorizationSigningAlgValues: ['RS256', 'ES256'],
      requestObjectSigningAlgValues: ['RS256', 'ES256'],
      clientAuthSigningAlgValues: [...CLIENT_ASSERTION_ALGS],
    },
    ttl: {
      ...TTL,
      AuthorizationCode: deps.codeTtl ?? TTL.AuthorizationCode,
      // A registered API's own lifetime for its tokens (`oidc resource add --access-token-ttl`).
      AccessToken: apiTtlOr(TTL.AccessToken),
      ClientCredentials: apiTtlOr(TTL.ClientCredentials),
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }, code: { scopes: Set<string> }) =>
      client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    conformIdTokenClaims: true,
    // OpenID Connect Core §3.1.2.1: redirect_uri is required in every authorization request, even for a client
    // that registered one (oidc-provider defaults to filling it in; conformance module
    // oidcc-ensure-redirect-uri-in-authorization-request).
    allowOmittingSingleRegisteredRedirectUri: false,
    async findAccount(ctx: { oidc: { provider: Provider } }, sub: string, token?: { kind?: string; sessionUid?: string }) {
      // A code redeemed after the session it was issued in ended (its Gatehouse session revoked, an
      // RP-initiated logout) is refused: what that session issued ends with it.
      if (token?.kind === 'AuthorizationCode' && token.sessionUid && !(await ctx.oidc.provider.Session.findByUid(token.sessionUid))) return undefined;
      const user = await deps.findUser(sub);
      if (!user) return undefined;
      return { accountId: user.id, claims: async () => claimsOf(user) };
    },
    async loadExistingGrant(ctx: {
      req: IncomingMessage;
      oidc: {
        client: { clientId: string };
        session: BindableSession & { grantIdFor(id: string): string | undefined };
        result?: { consent?: { grantId?: string } };
        provider: Provider;
      };
    }) {
      const { client, session, result } = ctx.oidc;
      const gatehouse = await deps.gatehouseSession(ctx.req);
      if (gatehouse) await deps.bindSession(session, gatehouse);
      const grantId =
        result?.consent?.grantId ??
        session.grantIdFor(client.clientId) ??
        (session.accountId ? await deps.consentGrant(session.accountId, client.clientId) : null);
      if (!grantId) return undefined;
      const grant = await ctx.oidc.provider.Grant.find(grantId);
      // A grant of another user (a consent record outliving a session) is not this session's.
      return grant && grant.accountId === session.accountId ? grant : undefined;
    },
    interactions: {
      policy,
      url: (_ctx: unknown, interaction: { uid: string }) => `${INTERACTION_PATH}/${interaction.uid}`,
    },
    features: {
      devInteractions: { enabled: false },
      // An https URL as client_id names its own registration document (off unless OIDC_CLIENT_METADATA_DOCUMENTS).
      clientIdMetadataDocument: cimd.feature,
      clientCredentials: { enabled: true },
      // RFC 8628, for clients registered with the grant (`oidc client add --grant device_code`): src/oidc/device-flow.ts.
      deviceFlow: deviceFlowFeature(errors),
      // Only the client a token was issued to may introspect it (RFC 7662 §4, RFC 9700 §4.15): a confidential
      // client learns nothing of another's tokens, refresh tokens above all. Resource servers get JWTs (RFC 9068)
      // they verify offline, so none needs to introspect another client's opaque token.
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId,
      },
      revocation: {
        enabled: true,
        // A client revokes only its own tokens; a public one asking about another's is told nothing (RFC 7009 §2.1).
        allowedPolicy: async (_ctx: unknown, client: { clientId: string; clientAuthMethod: string }, token: { clientId?: string }) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') return false;
          throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      userinfo: { enabled: true },
      // Discovery advertises it and clients' ID tokens carry `sid`; the tokens go out through the outbox (below).
      backchannelLogout: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        // Both pages are the view layer's templates (src/oidc/http-mount.ts), sent with their own policy.
        logoutSource: async (ctx: SourceCtx & { oidc: { params?: { post_logout_redirect_uri?: unknown } } }, form: string) => {
          const client = ctx.oidc.client;
          const returnTo = typeof ctx.oidc.params?.post_logout_redirect_uri === 'string' ? ctx.oidc.params.post_logout_redirect_uri : null;
          sendPage(
            ctx,
            await deps.renderLogout(form, { name: client?.clientName ?? null, keepsSession: client?.keep_session_on_logout === true, returnTo }, ctx.req),
          );
        },
        postLogoutSuccessSource: async (ctx: SourceCtx) => {
          sendPage(ctx, await deps.renderLoggedOut(ctx.oidc.client?.clientName ?? null, ctx.req));
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        // Only a registered API (`oidc resource add`) on the client's own allow-list names a resource server;
        // anything else is invalid_target (an approved client cannot mint a token for an API it was never
        // meant for). Its tokens are JWTs (RFC 9068) with it as audience and only its scopes, as consented.
        getResourceServerInfo: async (_ctx: unknown, resource: string, client: { allowed_resources?: string[] }) => {
          const allowed = Array.isArray(client?.allowed_resources) && client.allowed_resources.includes(resource);
          const found = allowed ? await deps.resources.find(resource) : null;
          if (!found) throw new errors.InvalidTarget('the resource is not registered, or this client may not ask for it');
          return {
            scope: found.scopes.join(' '),
            audience: found.identifier,
            accessTokenTTL: found.access_token_ttl ?? TTL.AccessToken,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    renderError: async (ctx: { type: string; body: unknown; status: number }, out: Record<string, string>) => {
      ctx.type = 'application/json';
      // A 503 was set for an outage (the HTTP side's `server_error` listener, src/oidc/http-mount.ts): say so.
      ctx.body =
        ctx.status === 503
          ? OUTAGE_BODY
          : { success: false, error: out.error_description ?? out.error, code: String(out.error ?? 'server_error').toUpperCase() };
    },
  });
  // Koa reads the request's address, scheme and host from X-Forwarded-* headers that the HTTP side
  // (src/oidc/http-mount.ts, `fromPublicUrl`) always sets itself: the scheme and host of PUBLIC_URL, and the
  // client address as Gatehouse's TRUST_PROXY reads it. A client's own such headers never reach the provider.
  provider.proxy = true;

  const Client = provider.Client as {
    prototype: {
      clientSecret?: string;
      clientAuthMethod: string;
      compareClientSecret(actual: string): Promise<boolean> | boolean;
      backchannelLogout(sub: string, sid: string): Promise<void>;
    };
  };
  // Secrets are stored hashed (RFC 6819 §5.1.4.1.3): the client's `clientSecret` is the SHA-256 of the secret,
  // and the presented secret is hashed and compared in constant time. compareClientSecret is the extension point
  // oidc-provider's maintainer names for this (panva/node-oidc-provider#631: "an exposed client prototype
  // function" rather than a configuration option), on this provider's own Client class, not a global patch;
  // oidc-client-secret.test.ts pins that the library still calls it (the right secret passes, the stored hash
  // presented as a secret does not). It is also where the registered method is enforced: oidc-provider accepts
  // either of client_secret_basic and client_secret_post for a client registered with one of them.
  Client.prototype.compareClientSecret = async function (this: { clientId: string; clientSecret?: string; clientAuthMethod: string }, actual: string) {
    const sentInBody = typeof (ProviderClass.ctx?.oidc?.params as { client_secret?: unknown } | undefined)?.client_secret === 'string';
    const used = sentInBody ? 'client_secret_post' : 'client_secret_basic';
    if (used !== this.clientAuthMethod) throw wrongSecretMethod(errors, this.clientAuthMethod, used);
    if (await deps.clientAuthBlocked(this.clientId)) return false;
    return secretMatches(actual, this.clientSecret);
  };

  // The same kind of hook for RP-initiated logout's back-channel notices: oidc-provider would POST each logout
  // token itself, inside the end-session request, once, to any address. They go to the outbox instead, with its
  // retries and address rules (src/oidc/backchannel.ts), like those of every other way a session ends.
  // oidc-backchannel.test.ts pins that the library still calls it.
  Client.prototype.backchannelLogout = async function (this: { clientId: string }, sub: string, sid: string) {
    await deps.backchannelLogout({ clientId: this.clientId, sub, sid });
  };

  provider.use(
    async (ctx: { path: string; method: string; status: number; req: IncomingMessage; res: ServerResponse; state: Record<string, unknown> }, next) => {
      await next();
      if (ctx.state.gatehouseLogout) await deps.endGatehouseSession(ctx.req, ctx.res);
    },
  );
  provider.use(devicePolling(deps.pollCache, Date.now));
  // RP-initiated logout ends the Gatehouse session too, unless the client was registered with keep_session_on_logout.
  provider.on('end_session.success', (ctx: { state: Record<string, unknown>; oidc: { client?: { keep_session_on_logout?: boolean } } }) => {
    ctx.state.gatehouseLogout = ctx.oidc.client?.keep_session_on_logout !== true;
  });
  for (const event of [
    'introspection.error',
    'revocation.error',
    'grant.success',
    'grant.error',
    'authorization.success',
    'authorization.error',
    'grant.revoked',
    'end_session.success',
  ]) {
    provider.on(event, (ctx: unknown, detail: unknown) => deps.onEvent(event, ctx, { detail }));
  }
  for (const event of ['grant.error', 'introspection.error', 'revocation.error', 'pushed_authorization_request.error']) {
    provider.on(event, explainClientAuthFailure);
  }
  return provider;
}
