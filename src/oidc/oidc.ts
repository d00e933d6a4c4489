import { randomBytes } from 'node:crypto';
import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type Provider from 'oidc-provider';
import type { AuditService } from '../audit/audit-service.js';
import type { Cache, Store } from '../cache/cache.js';
import type { Config } from '../config/schema.js';
import type { UserRepository } from '../data/repositories/user-repository.js';
import type { SessionsRevoked } from '../services/session-service.js';
import { unavailable } from '../errors/app-error.js';
import type { Logger } from '../log/logger.js';
import type { LimitTableConfig } from '../limits/limit-classes.js';
import { countInClass } from '../limits/count-in-class.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { createSealer } from '../social/crypto.js';
import { createDbAdapter, createStoreAdapter, pruneArtefacts, SESSION_BOUND, SESSION_LINK, SHORT_LIVED, type OidcAdapter } from './adapter.js';
import { createBackchannel, type LogoutOutbox } from './backchannel.js';
import { createClientStore } from './clients.js';
import { createResourceStore } from './resources.js';
import { createKeyStore, type KeyStore } from './keys.js';
import { buildProvider, MAX_SIGNED_TTL, OIDC_SCOPE_NAMES, type BindableSession, type ProviderDeps } from './provider.js';
import { createDeviceFlow } from './device-flow.js';

export interface OidcDeps {
  config: Pick<
    Config,
    | 'oidcEnabled'
    | 'oidcKeyRotationGrace'
    | 'oidcCodeTtlSeconds'
    | 'oidcClientMetadataDocuments'
    | 'webhookAllowPrivateUrls'
    | 'publicBaseUrl'
    | 'cookieSecret'
    | 'bridgeSecret'
    | 'rateLimitsEnabled'
  > &
    LimitTableConfig;
  sequelize: Sequelize;
  cache: Cache;
  /** Where short-lived artefacts live when instances share Redis (null: in the database). */
  store: Store | null;
  audit: AuditService;
  users: Pick<UserRepository, 'findById'>;
  logger: Logger;
  /** Counts failed client authentications per client (the `oidc-client-auth` class). */
  limiter: RateLimiter;
  /** The webhook outbox, through which back-channel logout tokens are delivered (src/oidc/backchannel.ts). */
  outbox?: LogoutOutbox | null;
  clock?: () => Date;
  /** Certificates (PEM) the provider's outbound fetches trust besides the system's: tests only (a self-signed document host). */
  outboundCa?: string;
}

/** What the HTTP layer hands the provider: the parts that read requests and write pages. */
export type OidcHttpGlue = Pick<ProviderDeps, 'gatehouseSession' | 'endGatehouseSession' | 'renderLogout' | 'renderLoggedOut'>;

/** How often an instance looks for a key that was added or started signing. */
const KEY_CHECK_MS = 10_000;

/**
 * Gatehouse as an OpenID provider (docs/oidc.md): the clients, the signing keys, the provider (built
 * on first use and again when the key set changes) and the revocation of a user's grants.
 */
export function createOidc(deps: OidcDeps) {
  const { config, sequelize } = deps;
  const clock = deps.clock ?? (() => new Date());
  const secret = config.cookieSecret ?? config.bridgeSecret ?? null;
  const sealer = secret ? createSealer(secret, 'oidc-keys') : null;
  const needSecret = () => {
    if (!sealer || !secret) throw unavailable('The OpenID provider needs a server secret (COOKIE_SECRET or BRIDGE_VALIDATION_SECRET) to seal its signing keys');
    return { sealer, secret };
  };
  const keyStore = (): KeyStore => createKeyStore({ sequelize, sealer: needSecret().sealer, clock, retainSec: MAX_SIGNED_TTL });
  const clients = createClientStore({ sequelize, audit: deps.audit, clock, resourceExists: async (id) => (await resources.find(id)) !== null });
  const resources = createResourceStore({ sequelize, audit: deps.audit, clock, dropFromClients: (id, tx) => clients.dropResource(id, tx) });
  const backchannel = createBackchannel({
    sequelize,
    clients,
    outbox: deps.outbox ?? null,
    issuer: config.publicBaseUrl,
    keys: async () => (await keyStore().load()).keys,
    clock,
  });
  const store = deps.store;
  const adapterFor = (model: string): OidcAdapter =>
    SHORT_LIVED.has(model) && store ? createStoreAdapter(store, model, clock) : createDbAdapter(sequelize, model, clock);

  let built: { provider: Provider; fingerprint: string } | null = null;
  let checkedAt = 0;
  let pending: Promise<Provider> | null = null;
  /** What the HTTP side handed the provider (http-mount.ts): the hosted /device page builds it with the same. */
  let httpGlue: OidcHttpGlue | null = null;

  async function revokeAccount(accountId: string, tx?: Transaction | null): Promise<void> {
    // The clients the account's provider sessions signed in are told (back-channel logout), in this unit of work.
    await backchannel.forSessions({ accountId }, tx);
    await sequelize.query('DELETE FROM oidc_artefacts WHERE account_id = ? OR grant_id IN (SELECT id FROM oidc_artefacts WHERE model = ? AND account_id = ?)', {
      replacements: [accountId, 'Grant', accountId],
      transaction: tx ?? undefined,
    });
  }

  /** The uids of the provider sessions (one per browser) bound to these Gatehouse sessions (their `SessionLink`s). */
  async function providerSessionsOf(sessionIds: string[], tx?: Transaction | null): Promise<string[]> {
    if (!sessionIds.length) return [];
    const links = await sequelize.query<{ id: string }>('SELECT id FROM oidc_artefacts WHERE model = ? AND uid IN (?)', {
      type: QueryTypes.SELECT,
      replacements: [SESSION_LINK, sessionIds],
      transaction: tx ?? undefined,
    });
    return links.map((l) => l.id);
  }

  /**
   * Ends what the OpenID provider issued in these Gatehouse sessions: each provider session bound to
   * one of them (its `SessionLink`, made by `bindSession`), the codes, access and refresh tokens
   * issued in it (their `uid` column holds the provider session's uid), and the grants that were
   * theirs alone (a grant a consent or another session's token still names stays).
   */
  async function revokeSessions(sessionIds: string[], tx?: Transaction | null): Promise<void> {
    const transaction = tx ?? undefined;
    const uids = await providerSessionsOf(sessionIds, tx);
    if (!uids.length) return;
    await backchannel.forSessions({ uids }, tx);
    const grants = await sequelize.query<{ grant_id: string }>(
      'SELECT DISTINCT grant_id FROM oidc_artefacts WHERE uid IN (?) AND model IN (?) AND grant_id IS NOT NULL',
      {
        type: QueryTypes.SELECT,
        replacements: [uids, SESSION_BOUND],
        transaction,
      },
    );
    await sequelize.query('DELETE FROM oidc_artefacts WHERE uid IN (?) AND model IN (?)', { replacements: [uids, SESSION_BOUND], transaction });
    await sequelize.query('DELETE FROM oidc_artefacts WHERE model = ? AND uid IN (?)', { replacements: [SESSION_LINK, sessionIds], transaction });
    if (!grants.length) return;
    await sequelize.query(
      "DELETE FROM oidc_artefacts WHERE model = 'Grant' AND id IN (?) AND NOT EXISTS (SELECT 1 FROM oidc_artefacts o WHERE o.grant_id = oidc_artefacts.id AND o.model <> 'Grant')",
      { replacements: [grants.map((g) => g.grant_id)], transaction },
    );
  }

  /**
   * Binds the provider's session (one browser's) to the Gatehouse session it is used with, so that
   * revoking that Gatehouse session ends what was issued in it. A provider session met with another
   * Gatehouse session than the one it is bound to (the browser signed in again) continues under a new
   * uid, without the old one's per-client authorizations: what the old one issued stays the old
   * Gatehouse session's. Runs before the provider loads the request's grant.
   */
  async function bindSession(session: BindableSession, gatehouse: { userId: string; sessionId: string }): Promise<void> {
    if (!session.accountId || session.accountId !== gatehouse.userId) return;
    const [link] = await sequelize.query<{ uid: string }>('SELECT uid FROM oidc_artefacts WHERE model = ? AND id = ?', {
      type: QueryTypes.SELECT,
      replacements: [SESSION_LINK, session.uid],
    });
    if (link?.uid === gatehouse.sessionId) return;
    if (link) {
      session.uid = randomBytes(16).toString('base64url');
      session.authorizations = {};
    }
    const payload = JSON.stringify({ sessionUid: session.uid, gatehouseSession: gatehouse.sessionId });
    await sequelize.query('INSERT INTO oidc_artefacts (model, id, payload, uid, account_id) VALUES (?, ?, ?, ?, ?) ON CONFLICT (model, id) DO NOTHING', {
      replacements: [SESSION_LINK, session.uid, payload, gatehouse.sessionId, gatehouse.userId],
    });
  }

  const consentId = (accountId: string, clientId: string) => `${accountId}:${clientId}`;
  const consentGrant = async (accountId: string, clientId: string) => {
    const found = await adapterFor('Consent').find(consentId(accountId, clientId));
    return typeof found?.grantId === 'string' ? found.grantId : null;
  };

  const service = {
    enabled: config.oidcEnabled,
    clients: clients,
    resources,
    keys: () => keyStore(),
    issuer: config.publicBaseUrl,
    secret: () => needSecret().secret,

    /** Hands the provider the HTTP side's request readers and page renderers (once, when the app is built). */
    attach(glue: OidcHttpGlue): void {
      httpGlue = glue;
    },

    /** The provider for this instance, rebuilt when a key was added or started signing (checked every 10 s, or `force`). */
    async provider(glue: OidcHttpGlue, opts: { force?: boolean } = {}): Promise<Provider> {
      const now = Date.now();
      if (built && !opts.force && now - checkedAt < KEY_CHECK_MS) return built.provider;
      pending ??= (async () => {
        try {
          const store = keyStore();
          await store.ensure();
          const set = await store.load();
          checkedAt = Date.now();
          if (built && built.fingerprint === set.fingerprint) return built.provider;
          const provider = await buildProvider({
            ...glue,
            issuer: config.publicBaseUrl,
            keys: set.keys,
            codeTtl: config.oidcCodeTtlSeconds,
            clientMetadata: { enabled: config.oidcClientMetadataDocuments, allowPrivate: config.webhookAllowPrivateUrls, extraCa: deps.outboundCa },
            secret: needSecret().secret,
            adapterFor,
            clients,
            resources,
            bindSession,
            backchannelLogout: (notice) => backchannel.enqueue([notice]).then(() => undefined),
            findUser: async (id) => {
              const u = typeof id === 'string' && id.length <= 36 ? await deps.users.findById(id) : null;
              return u && !u.disabled_at && !u.deleted_at ? u : null;
            },
            consentGrant,
            pollCache: deps.cache,
            onEvent: (event, ctx, detail) => recordEvent(event, ctx, detail),
            notice: (level, message) => deps.logger[level]({ component: 'oidc-provider' }, message),
            clientAuthBlocked: async (clientId) => config.rateLimitsEnabled && (await deps.cache.get(`oidc:client-blocked:${clientId}`)) !== null,
          });
          built = { provider, fingerprint: set.fingerprint };
          return provider;
        } finally {
          pending = null;
        }
      })();
      return pending;
    },

    /**
     * The origin of the redirect URI an authorization request waiting on a sign-in (interaction `uid`) will
     * return to, or null. The hosted sign-in pages add it to their CSP's form-action: Chromium applies
     * form-action to the redirects after a post, and for a first-party client the sign-in form's redirects
     * end at the client (docs/oidc.md).
     */
    async interactionRedirectOrigin(uid: string): Promise<string | null> {
      if (!config.oidcEnabled || typeof uid !== 'string' || !/^[\w-]{1,64}$/.test(uid)) return null;
      const found = await adapterFor('Interaction').find(uid);
      const uri = (found?.params as { redirect_uri?: unknown } | undefined)?.redirect_uri;
      if (typeof uri !== 'string') return null;
      try {
        const u = new URL(uri);
        return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null;
      } catch {
        return null;
      }
    },

    /** Remembers a user's consent to a third-party client (the grant it made). */
    async rememberConsent(accountId: string, clientId: string, grantId: string, scope: string): Promise<void> {
      await adapterFor('Consent').upsert(consentId(accountId, clientId), { grantId, accountId, clientId, scope, at: Math.floor(clock().getTime() / 1000) });
      await deps.audit.record({ type: 'oidc.consent_granted', userId: accountId, details: { client_id: clientId, scope } });
    },

    /** The clients a user has consented to. */
    async consents(accountId: string): Promise<{ client_id: string; scope: string; granted_at: string }[]> {
      const rows = await sequelize.query<{ payload: string }>("SELECT payload FROM oidc_artefacts WHERE model = 'Consent' AND account_id = ?", {
        type: QueryTypes.SELECT,
        replacements: [accountId],
      });
      return rows.map((r) => {
        const p = JSON.parse(r.payload) as { clientId: string; scope: string; at: number };
        return { client_id: p.clientId, scope: p.scope, granted_at: new Date(p.at * 1000).toISOString() };
      });
    },

    /** Revokes a user's consent to a client and every token of that grant; false when there was none. */
    async revokeConsent(accountId: string, clientId: string): Promise<boolean> {
      const id = consentId(accountId, clientId);
      const found = await adapterFor('Consent').find(id);
      if (!found) return false;
      await sequelize.transaction(async (tx) => {
        await sequelize.query("DELETE FROM oidc_artefacts WHERE model = 'Consent' AND id = ?", { replacements: [id], transaction: tx });
        if (typeof found.grantId === 'string')
          await sequelize.query('DELETE FROM oidc_artefacts WHERE grant_id = ? OR (model = ? AND id = ?)', {
            replacements: [found.grantId, 'Grant', found.grantId],
            transaction: tx,
          });
        await deps.audit.record({ type: 'oidc.consent_revoked', userId: accountId, details: { client_id: clientId } }, { tx });
      });
      return true;
    },

    /** Makes the signing keys when there are none (init, upgrade); nothing without a server secret or while switched off. */
    async ensureKeys(): Promise<boolean> {
      if (!config.oidcEnabled || !sealer) return false;
      return keyStore().ensure();
    },

    /** New keys for every algorithm, signing after `graceSec`; recorded. */
    async rotateKeys(graceSec: number): Promise<{ kids: string[]; signs_from: string }> {
      const store = keyStore();
      await store.ensure();
      const kids = await store.rotate(graceSec);
      const signsFrom = new Date(clock().getTime() + graceSec * 1000).toISOString();
      await deps.audit.record({ type: 'oidc.keys_rotated', details: { kids, signs_from: signsFrom } });
      return { kids, signs_from: signsFrom };
    },

    revokeAccount,
    revokeSessions,

    /**
     * Revoked Gatehouse sessions (the event table's `sessions.revoked`, in the revocation's unit of work):
     * what was issued in them ends, and everything of a user all of whose sessions ended.
     */
    async sessionsRevoked(r: Pick<SessionsRevoked, 'ids' | 'everyOf'>, tx?: Transaction | null): Promise<void> {
      if (r.ids.length) await revokeSessions(r.ids, tx);
      if (r.everyOf) await revokeAccount(r.everyOf, tx);
    },

    /**
     * Gatehouse sessions signed out (the event table's `sessions.signed_out`): not a revocation, what they
     * authorized stays, but the clients with a back-channel logout URI are told they ended.
     */
    async sessionsSignedOut(ids: string[], tx?: Transaction | null): Promise<void> {
      await backchannel.forSessions({ uids: await providerSessionsOf(ids, tx) }, tx);
    },
    prune: () => pruneArtefacts(sequelize, clock()),
  };
  /** The device authorization grant's approvals (RFC 8628; the hosted /device page). */
  const device = createDeviceFlow({
    provider: (): Promise<Provider> => {
      if (!httpGlue) throw unavailable('The OpenID provider is not mounted');
      return service.provider(httpGlue);
    },
    scopes: new Set(OIDC_SCOPE_NAMES),
    consentGrant,
    rememberConsent: (accountId, clientId, grantId, scope) => service.rememberConsent(accountId, clientId, grantId, scope),
    audit: deps.audit,
  });
  return { ...service, device };

  /** One failed authentication of a client: when its budget is spent, it is refused until the window ends. */
  async function clientAuthFailed(clientId: string): Promise<void> {
    try {
      const r = await countInClass({ config, limiter: deps.limiter }, 'oidc-client-auth', clientId);
      if (r && !r.allowed) await deps.cache.set(`oidc:client-blocked:${clientId}`, '1', Math.max(1, r.retryAfterSec));
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message }, 'could not count a failed OIDC client authentication');
    }
  }

  function recordEvent(event: string, ctx: unknown, detail: Record<string, unknown>): void {
    const oidc = (
      ctx as { oidc?: { client?: { clientId?: string }; session?: { accountId?: string }; account?: { accountId?: string }; params?: Record<string, unknown> } }
    ).oidc;
    const clientId = oidc?.client?.clientId ?? null;
    const userId = oidc?.account?.accountId ?? oidc?.session?.accountId ?? null;
    // The client acted (its token request, its authorization request through the browser); where from, and
    // the request id, come from the request's audit scope (src/oidc/http-mount.ts enters one).
    const actor = clientId ? { via: 'oidc_client' as const, client_id: clientId } : undefined;
    const err = detail.detail as { error?: string; error_detail?: string; error_description?: string } | undefined;
    switch (event) {
      case 'authorization.success':
        deps.audit.recordLater({ type: 'oidc.authorized', userId, actor, details: { client_id: clientId, scope: oidc?.params?.scope ?? null } });
        break;
      case 'grant.success':
        deps.audit.recordLater({ type: 'oidc.token_granted', userId, actor, details: { client_id: clientId, grant_type: oidc?.params?.grant_type ?? null } });
        break;
      case 'introspection.error':
      case 'revocation.error':
      case 'grant.error':
        if (event === 'grant.error' && err?.error_detail === 'refresh token already used') {
          deps.audit.recordLater({ type: 'oidc.refresh_reuse_detected', outcome: 'failure', userId, actor, details: { client_id: clientId } });
        } else if (err?.error === 'invalid_client') {
          const id = clientId ?? (typeof oidc?.params?.client_id === 'string' ? oidc.params.client_id : null);
          if (id) void clientAuthFailed(id);
          // Not `actor`: the client did not prove it is who it names.
          deps.audit.recordLater(
            { type: 'oidc.client_auth_failed', outcome: 'failure', details: { client_id: id } },
            { oncePer: { key: `oidc-client:${id}`, ms: 60_000 } },
          );
        }
        break;
      default:
        break;
    }
  }
}

export type OidcService = ReturnType<typeof createOidc>;
