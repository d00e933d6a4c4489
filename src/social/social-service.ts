import { CodeChallengeMethod, OAuth2Client, type OAuth2Tokens } from 'arctic';
import type { Transaction } from 'sequelize';
import type { Config } from '../config/schema.js';
import { isUniqueViolation } from '../data/db-errors.js';
import { canonicalEmail } from '../data/models/user-columns.js';
import type { UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import type { Logger } from '../log/logger.js';
import type { Hooks } from '../modules/hooks.js';
import { runAfterHooks } from '../services/after-hooks.js';
import type { ClientInfo, LoginResult } from '../services/auth-service.js';
import type { SignIn } from '../services/sign-in.js';
import type { UserService } from '../services/user-service.js';
import type { AuditService } from '../audit/audit-service.js';
import { actorOf, signInFailed } from '../services/sign-in-audit.js';
import type { AccountRepository, LinkedAccountRecord } from './account-repository.js';
import type { Sealer } from './crypto.js';
import { SocialCodes, socialError } from './errors.js';
import { sha256Hex } from './id-token.js';
import type { Flow, FlowStart, FlowStore } from './flow-store.js';
import { exchangeCode } from './provider-http.js';
import type { CallbackExtras, ProviderProfile, ProviderRuntime, SocialProvider } from './provider.js';
import { PROVIDERS } from './providers/index.js';
import { endpointsFor } from './endpoints.js';
import { PROVIDER_IDS, isProviderId, webClientId, type EndpointKey, type ProviderId } from './settings.js';
import { createLinkedAccounts } from './linked-accounts.js';

export interface SocialServiceDeps {
  config: Config;
  /** Linked accounts (social-stores.ts builds them with the flows and the sealer). */
  accounts: AccountRepository;
  /** Sign-ins in flight; null without a server secret (social login then answers 503). */
  flows: FlowStore | null;
  /** Seals the provider tokens an account keeps (store_tokens); null without a server secret. */
  tokenSealer: Sealer | null;
  /** Opens a unit of work (sequelize.transaction). */
  transaction<T>(fn: (t: Transaction) => Promise<T>): Promise<T>;
  users: UserRepository;
  userService: UserService;
  hooks: Hooks;
  /** The one sign-in seam (services/sign-in.ts): a full session, or a pending two-factor one. */
  signIn: SignIn;
  /** social.linked / social.unlinked in the change's transaction; refused sign-ins after the answer. */
  audit: Pick<AuditService, 'record' | 'recordLater'>;
  logger?: Logger;
  clock?: () => Date;
}

/** A finished social sign-in: a session (full or pending two-factor), or, for an explicit link, the account. */
export type SocialOutcome =
  { kind: 'signed-in'; provider: ProviderId; login: LoginResult; isNewUser: boolean } | { kind: 'linked'; provider: ProviderId; account: LinkedAccountRecord };

interface KeptTokens {
  access: string | null;
  refresh: string | null;
  expiresAt: Date | null;
}

const tokensOf = (t: OAuth2Tokens): KeptTokens => {
  const d = t.data as Record<string, unknown>;
  const expiresIn = typeof d.expires_in === 'number' ? d.expires_in : Number(d.expires_in);
  return {
    access: typeof d.access_token === 'string' ? d.access_token : null,
    refresh: typeof d.refresh_token === 'string' ? d.refresh_token : null,
    expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? new Date(Date.now() + expiresIn * 1000) : null,
  };
};

/** Social login (the spec's BETA feature): six providers, the web flow, mobile sign-in and linked accounts. */
export function createSocialService(deps: SocialServiceDeps) {
  const { config } = deps;
  const clock = deps.clock ?? (() => new Date());
  const { accounts, flows, tokenSealer } = deps;
  const runtimes = new Map<ProviderId, ProviderRuntime>();

  const redirectUri = (id: ProviderId) => `${config.publicBaseUrl}/auth/social/${id}/callback`;

  function runtime(id: ProviderId): ProviderRuntime | null {
    const settings = config.socialAuth[id];
    if (!settings) return null;
    let rt = runtimes.get(id);
    if (!rt) {
      const def = PROVIDERS[id];
      const endpoints = endpointsFor(id, settings);
      rt = {
        id,
        settings,
        timeoutMs: config.socialProviderTimeoutMs,
        url(key: EndpointKey) {
          const u = endpoints[key];
          if (!u) throw socialError(503, SocialCodes.PROVIDER_NOT_CONFIGURED, `${def.name} has no ${key} endpoint configured`);
          return u;
        },
        async clientSecret() {
          if (def.makeClientSecret) {
            try {
              return await def.makeClientSecret(settings, endpoints.issuer ?? '');
            } catch (err) {
              deps.logger?.error({ provider: id, err: (err as Error)?.message }, 'cannot make the client secret');
              throw socialError(503, SocialCodes.PROVIDER_NOT_CONFIGURED, `${def.name} sign-in is misconfigured (client secret key)`);
            }
          }
          return settings.client_secret ?? null;
        },
      };
      runtimes.set(id, rt);
    }
    return rt;
  }

  function assertEnabled(): void {
    if (!config.socialLogin) throw socialError(503, SocialCodes.DISABLED, 'Social login is not enabled');
  }

  /** The provider by its path segment: 404 for one that is unknown or not configured. */
  function providerFor(id: unknown): { def: SocialProvider; rt: ProviderRuntime } {
    assertEnabled();
    const rt = isProviderId(id) ? runtime(id) : null;
    if (!rt) throw socialError(404, SocialCodes.PROVIDER_NOT_CONFIGURED, 'Unknown or unconfigured social login provider');
    return { def: PROVIDERS[rt.id], rt };
  }

  /** return_to must be an absolute http(s) URL whose origin is allow-listed (no open redirect). */
  function checkReturnTo(raw: string | undefined): string | null {
    if (raw === undefined || raw === '') return null;
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw socialError(400, SocialCodes.INVALID_RETURN_URL, 'return_to must be an absolute URL');
    }
    const allowed = config.socialRedirectAllowlist.some((o) => {
      try {
        return new URL(o).origin === u.origin;
      } catch {
        return false;
      }
    });
    if (!/^https?:$/.test(u.protocol) || u.username || u.password || !allowed) {
      throw socialError(400, SocialCodes.INVALID_RETURN_URL, 'return_to is not an allowed redirect URL');
    }
    return u.toString();
  }

  function sealTokens(id: ProviderId, t: KeptTokens | null) {
    if (!t || !config.socialAuth[id]?.store_tokens || !tokenSealer) return {};
    return {
      access_token: t.access ? tokenSealer.seal(t.access) : null,
      refresh_token: t.refresh ? tokenSealer.seal(t.refresh) : null,
      token_expires_at: t.expiresAt,
    };
  }

  const profileFields = (p: ProviderProfile) => ({
    provider_email: p.email ? canonicalEmail(p.email) : null,
    provider_name: [p.name, p.lastName].filter(Boolean).join(' ') || null,
    provider_picture: p.picture,
  });

  const usable = (u: UserRecord | null): u is UserRecord => !!u && !u.deleted_at && !u.disabled_at;
  const accountDisabled = () => socialError(403, SocialCodes.ACCOUNT_DISABLED, 'This account is disabled');

  /**
   * Who the provider's user is here, written in one transaction: the linked account, else an existing
   * user by an email both sides verified (linked now), else a new customer. Nothing is written when
   * the answer is a refusal.
   */
  async function resolve(id: ProviderId, profile: ProviderProfile, tokens: KeptTokens | null, linkUserId: string | null, t: Transaction) {
    const now = clock();
    const known = await accounts.find(id, profile.id, t);
    const fresh = { ...profileFields(profile), ...sealTokens(id, tokens) };
    const method = `social:${id}` as const;
    // A refused sign-in is recorded after the answer, apart from this (rolled back) unit of work.
    const refused = (user: UserRecord, reason: string) => deps.audit.recordLater(signInFailed(method, reason, { user }, { provider: id }));
    const refusedUnusable = (user: UserRecord | null) => user && refused(user, user.deleted_at ? 'deleted' : 'disabled');
    const linked = (user: UserRecord, via: string) =>
      deps.audit.record({ type: 'social.linked', userId: user.id, actor: actorOf(user), details: { provider: id, via } }, { tx: t });
    if (linkUserId) {
      // The user who started the link may have been disabled or deleted while at the provider.
      const linking = await deps.users.findById(linkUserId);
      if (!usable(linking)) throw accountDisabled();
      if (known && known.user_id !== linkUserId) throw socialError(400, SocialCodes.ALREADY_LINKED, 'This provider account is linked to another user');
      const mine = await accounts.findForUser(linkUserId, id, t);
      if (mine && mine.provider_user_id !== profile.id)
        throw socialError(400, SocialCodes.ALREADY_LINKED, `Another ${PROVIDERS[id].name} account is linked already; unlink it first`);
      if (known) {
        await accounts.refresh(known.id, fresh, now, t);
        return { kind: 'linked' as const, account: { ...known, ...fresh } };
      }
      const account = await accounts.create(
        { user_id: linkUserId, provider: id, provider_user_id: profile.id, ...nullTokens, ...fresh, metadata: null },
        now,
        t,
      );
      await linked(linking, 'link');
      return { kind: 'linked' as const, account };
    }
    if (known) {
      const user = await deps.users.findById(known.user_id);
      if (!usable(user)) {
        refusedUnusable(user);
        throw accountDisabled();
      }
      // The same refusal password login gives (auth-service.ts): the account itself is not verified yet.
      if (config.requireEmailVerification && !user.is_verified) {
        refused(user, 'unverified');
        throw socialError(403, 'EMAIL_NOT_VERIFIED', 'Email not verified');
      }
      await accounts.refresh(known.id, fresh, now, t);
      return { kind: 'user' as const, user, isNew: false };
    }
    const email = profile.email ? canonicalEmail(profile.email) : null;
    if (!email) {
      deps.audit.recordLater(signInFailed(method, 'no_email', { identifier: null }, { provider: id }));
      throw socialError(400, SocialCodes.NO_EMAIL, `${PROVIDERS[id].name} did not share an email address; sign in another way and link the account`);
    }
    const existing = await deps.users.findByEmail(email, { includeDeleted: true });
    if (existing) {
      // Only an address both sides verified proves it is the same person; anything else would let
      // whoever controls an unverified provider address take over the account.
      if (!profile.emailVerified || !existing.is_verified) {
        refused(existing, 'link_required');
        throw socialError(400, SocialCodes.LINK_REQUIRED, 'An account with this email exists: sign in to it and link this provider from there');
      }
      if (!usable(existing)) {
        refusedUnusable(existing);
        throw accountDisabled();
      }
      await accounts.create({ user_id: existing.id, provider: id, provider_user_id: profile.id, ...nullTokens, ...fresh, metadata: null }, now, t);
      // Linked by the address both sides verified, at this sign-in.
      await linked(existing, 'verified_email');
      return { kind: 'user' as const, user: existing, isNew: false };
    }
    if (!config.registrationEnabled) {
      deps.audit.recordLater(signInFailed(method, 'registration_disabled', { identifier: email }, { provider: id }));
      throw socialError(403, SocialCodes.REGISTRATION_DISABLED, 'Registration is disabled');
    }
    if (config.requireEmailVerification && !profile.emailVerified) {
      deps.audit.recordLater(signInFailed(method, 'email_unverified', { identifier: email }, { provider: id }));
      throw socialError(403, SocialCodes.EMAIL_NOT_VERIFIED, `${PROVIDERS[id].name} has not verified this email address`);
    }
    const user = await deps.userService.create(
      {
        email,
        name: profile.name?.slice(0, 100) ?? null,
        last_name: profile.lastName?.slice(0, 100) ?? null,
        user_type: 'customer',
        is_verified: profile.emailVerified,
        password: null,
      },
      {
        actor: null,
        via: 'social',
        provider: id,
        tx: t,
        picture: profile.picture && /^https?:\/\//i.test(profile.picture) ? profile.picture.slice(0, 2000) : null,
      },
    );
    await accounts.create({ user_id: user.id, provider: id, provider_user_id: profile.id, ...nullTokens, ...fresh, metadata: null }, now, t);
    await linked(user, 'sign_up');
    return { kind: 'user' as const, user, isNew: true };
  }

  /** Resolves in a transaction, once more after a unique-index race (two first sign-ins at once). */
  async function finish(
    id: ProviderId,
    profile: ProviderProfile,
    tokens: KeptTokens | null,
    linkUserId: string | null,
    client: ClientInfo,
  ): Promise<SocialOutcome> {
    let r;
    try {
      r = await deps.transaction((t) => resolve(id, profile, tokens, linkUserId, t));
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      r = await deps.transaction((t) => resolve(id, profile, tokens, linkUserId, t));
    }
    if (r.kind === 'linked') return { kind: 'linked', provider: id, account: r.account };
    const method = `social:${id}` as const;
    if (r.isNew) await runAfterHooks(deps.hooks, deps.logger, 'auth.registered', { user: r.user, method });
    const login = await deps.signIn(r.user, method, { ip: client.ip, userAgent: client.userAgent, deviceId: client.deviceId }, { amr: profile.amr });
    return { kind: 'signed-in', provider: id, login, isNewUser: r.isNew };
  }

  // Listing and unlinking a user's provider accounts (linked-accounts.ts).
  const linkedAccounts = createLinkedAccounts({ ...deps, assertEnabled });

  return {
    enabled: () => config.socialLogin,
    assertEnabled,
    providerFor,
    checkReturnTo,

    /** The configured providers, in the contract's order. */
    providers() {
      assertEnabled();
      return PROVIDER_IDS.filter((id) => config.socialAuth[id]).map((id) => ({
        id,
        name: PROVIDERS[id].name,
        type: PROVIDERS[id].oidc ? 'oidc' : 'oauth2',
        login_url: `/auth/social/${id}/login`,
        mobile: PROVIDERS[id].oidc ? 'id_token' : 'access_token',
      }));
    },

    /** Starts the web flow: the provider's authorization URL, and the browser binding for the flow cookie. */
    async start(provider: string, input: Omit<FlowStart, 'provider'>): Promise<{ url: string; binding: string; formPost: boolean }> {
      const { def, rt } = providerFor(provider);
      if (!flows) throw socialError(503, SocialCodes.PROVIDER_NOT_CONFIGURED, 'Social login needs COOKIE_SECRET (or BRIDGE_VALIDATION_SECRET) set');
      const authorization = rt.url('authorization');
      rt.url('token');
      const f = await flows.start({ ...input, provider: rt.id });
      const client = new OAuth2Client(webClientId(rt.settings), null, redirectUri(rt.id));
      const url = client.createAuthorizationURLWithPKCE(authorization, f.state, CodeChallengeMethod.S256, f.verifier, rt.settings.scopes ?? def.defaultScopes);
      if (def.oidc) url.searchParams.set('nonce', def.hashNonce ? sha256Hex(f.nonce) : f.nonce);
      const extra = def.authParams?.() ?? {};
      for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
      return { url: url.toString(), binding: f.binding, formPost: extra.response_mode === 'form_post' };
    },

    /** The provider's answer: the flow checked and used up, the code exchanged, the user signed in (or linked). */
    async callback(
      provider: string,
      input: { state?: string; code?: string; error?: string; binding?: string; extras: CallbackExtras; client: ClientInfo },
      peek?: (f: Pick<Flow, 'returnTo' | 'format'>) => void,
    ): Promise<SocialOutcome> {
      const { def, rt } = providerFor(provider);
      if (!flows) throw socialError(400, SocialCodes.INVALID_STATE, 'Invalid or expired social login state');
      const flow = await flows.consume(rt.id, input.state, input.binding, peek);
      if (input.error) throw socialError(400, SocialCodes.AUTHORIZATION_DENIED, `${def.name} sign-in was cancelled or refused`);
      if (!input.code || input.code.length > 4096) throw socialError(400, SocialCodes.INVALID_CODE, 'The provider sent no authorization code');
      const tokens = await exchangeCode(rt, rt.url('token'), {
        clientId: webClientId(rt.settings),
        clientSecret: await rt.clientSecret(),
        auth: def.clientAuth,
        code: input.code,
        verifier: flow.verifier,
        redirectUri: redirectUri(rt.id),
      });
      const profile = await def.fromCode(rt, tokens, flow.nonce, input.extras);
      return finish(rt.id, profile, tokensOf(tokens), flow.linkUserId, input.client);
    },

    /** Mobile: an id_token (OpenID providers) or an access token the provider confirms is ours. */
    async loginApi(provider: string, input: { idToken?: string; accessToken?: string; nonce?: string }, client: ClientInfo): Promise<SocialOutcome> {
      const { def, rt } = providerFor(provider);
      let profile: ProviderProfile;
      let kept: KeptTokens | null = null;
      if (def.oidc) {
        if (!input.idToken) throw socialError(400, 'VALIDATION_ERROR', `idToken is required for ${def.name}`);
        if (!def.fromIdToken) throw new Error(`social: OpenID provider ${def.name} without fromIdToken`);
        profile = await def.fromIdToken(rt, input.idToken, input.nonce);
      } else {
        // The contract's `idToken` field carries "an access token or ID token": for OAuth-only providers it is the access token.
        const token = input.accessToken ?? input.idToken;
        if (!token) throw socialError(400, 'VALIDATION_ERROR', `accessToken is required for ${def.name}`);
        if (!def.fromAccessToken) throw new Error(`social: OAuth provider ${def.name} without fromAccessToken`);
        profile = await def.fromAccessToken(rt, token);
        kept = { access: token, refresh: null, expiresAt: null };
      }
      return finish(rt.id, profile, kept, null, client);
    },

    ...linkedAccounts,
  };
}

const nullTokens = { access_token: null, refresh_token: null, token_expires_at: null };

export type SocialService = ReturnType<typeof createSocialService>;
