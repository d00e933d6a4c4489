import path from 'node:path';
import type { Config } from './config/schema.js';
import { closer, within, type Closer } from './app-stores.js';
import type { AppStores, AppBasics } from './app-context.js';
import type { AuditService } from './audit/audit-service.js';
import { createWebhooks } from './webhooks/webhooks.js';
import type { WebhookService } from './webhooks/webhook-service.js';
import { createOidc, type OidcService } from './oidc/oidc.js';
import type { DeferredWork } from './services/deferred-work.js';
import { createSecurityNotices, type SecurityNotices } from './audit/security-notices.js';
import { createNewDeviceDetector } from './audit/new-device.js';
import { createAccountNotifier } from './services/account-notify.js';
import { createSessionService, type SessionService } from './services/session-service.js';
import { createPasswordHasher, siteWords, type PasswordHasher } from './services/security/passwords.js';
import { createUserService, type UserService } from './services/user-service.js';
import { createAuthService, type AuthService } from './services/auth-service.js';
import { createPictureService, type PictureService } from './services/picture-service.js';
import { createAccountFlows, type AccountFlows } from './services/account-flows.js';
import { createSignIn, type SignInService } from './services/sign-in.js';
import { createSocialService, type SocialService } from './social/social-service.js';
import { createSocialStores } from './social/social-stores.js';
import type { ModuleRuntime } from './modules/runtime.js';
import { timedHasher, watchCounts } from './metrics/app-metrics.js';

export interface Services {
  sessions: SessionService;
  passwords: PasswordHasher;
  users: UserService;
  auth: AuthService;
  pictures: PictureService;
  mailer: AccountFlows['mailer'];
  sms: AccountFlows['sms'];
  tokens: AccountFlows['tokens'];
  verification: AccountFlows['verification'];
  passwordFlows: AccountFlows['passwordFlows'];
  emailChange: AccountFlows['emailChange'];
  /** The one sign-in seam: every way of signing in ends here (services/sign-in.ts). */
  signIn: SignInService;
  tokenLogin: AccountFlows['tokenLogin'];
  deferred: AccountFlows['deferred'];
  /** Social login (src/social). */
  social: SocialService;
  /** The security-event record (src/audit): the one writer of audit_events, and the event bus (src/app-events.ts). */
  audit: AuditService;
  /** Signed webhooks (src/webhooks): endpoints, the outbox written with each event, the delivery worker. */
  webhooks: WebhookService;
  /** Gatehouse as an OpenID provider (src/oidc, docs/oidc.md): clients, keys, the provider. */
  oidc: OidcService;
}

/** The services stage's result: the services, and the reactions the event table names that are not services. */
export interface ServicesStage {
  services: Services;
  /** Security notices mailed about a user's account (src/audit/security-notices.ts): a reaction of the event table. */
  notices: SecurityNotices;
}

/**
 * Stage 4 of the builder (src/app-context.ts): core's services, each handed only what it uses. None
 * subscribes to an event here: what reacts to what is the event table's (src/app-events.ts), wired next.
 */
export async function servicesStage(
  config: Config,
  basics: AppBasics,
  stores: AppStores,
  events: { audit: AuditService; deferred: DeferredWork },
  modules: ModuleRuntime,
  closers: Closer[],
  opts: { outboundCa?: string },
): Promise<ServicesStage> {
  const { logger, metrics, clock, instanceId } = basics;
  const { sequelize, repos, hooks, bus, cache, store, limiter, loginBackoff, dbHealth, redis, redisHealth } = stores;
  const { audit, deferred } = events;
  const transaction = stores.transaction;

  const sessions = createSessionService({
    sessions: repos.sessions,
    users: repos.users,
    shared: redis ? cache : null,
    bus,
    logger,
    clock,
    onLookup: metrics.cacheLookup,
    ttlSec: config.sessionTtl,
    pendingTtlSec: config.pendingSessionTtl,
    idleTimeoutSec: config.sessionIdleTimeout,
    maxLifetimeSec: config.sessionMaxLifetime,
    outage: { downSince: () => dbHealth.downSince(), refusal: () => dbHealth.refusal() },
    outageGraceSec: config.sessionOutageGrace,
  });
  await sessions.subscribe();
  redisHealth?.on('recovered', () => {
    sessions.resync().catch((err: Error) => logger.warn({ err: err.message }, 'could not resync caches after the Redis outage'));
  });
  // Last uses of sessions still waiting for their write go out before the database closes (at most 2 s: a database down must not hold up the stop).
  closers.unshift(closer('session use', () => within(sessions.flushUses(), 2_000)));
  const passwords = timedHasher(createPasswordHasher(config.bcryptRounds), metrics);
  watchCounts(metrics, repos, clock);
  const users = createUserService({
    users: repos.users,
    sessions,
    passwords,
    passwordWords: siteWords(config),
    hooks,
    modules,
    transaction,
    audit,
    clock,
    logger,
  });
  const signIn = createSignIn({ sessions, hooks, logger, audit, transaction, onActivated: () => metrics.login('success') });
  const flows = createAccountFlows({
    config,
    logger,
    authTokens: repos.authTokens,
    users: repos.users,
    userService: users,
    sessions,
    passwords,
    hooks,
    signIn: signIn.signIn,
    limiter,
    deferred,
    audit,
    transaction,
    clock,
  });
  // Mail and tokens scheduled after answers go out before the mailer closes.
  closers.unshift(
    closer('deferred mail', async () => {
      await flows.deferred.idle(5_000);
      await flows.mailer.close();
    }),
  );
  const auth = createAuthService({
    signIn: signIn.signIn,
    users: repos.users,
    userService: users,
    sessions,
    passwords,
    hooks,
    backoff: loginBackoff,
    audit,
    transaction,
    config,
    logger,
    addressTaken: (email) => flows.verification.addressTaken(email),
  });
  // Mails the user about security events on their account, after commit and after the answer.
  const notices = createSecurityNotices({
    config,
    users: repos.users,
    notify: createAccountNotifier({ mailer: flows.mailer, sms: flows.sms, limiter, config, logger }),
    detector: createNewDeviceDetector({ repo: repos.audit }),
    later: (what, work) => deferred.later(what, work),
    logger,
  });
  const webhooks = createWebhooks({ config, sequelize, audit, logger, metrics, instanceId, clock, dbHealth });
  // The worker (started by serve) stops before the database closes; its requests in flight are aborted.
  closers.unshift(closer('webhook worker', () => webhooks.stopWorker(2_000)));
  const oidc = createOidc({
    config,
    sequelize,
    cache,
    store,
    audit,
    users: repos.users,
    logger,
    limiter,
    outbox: webhooks,
    clock,
    outboundCa: opts.outboundCa,
  });
  const pictures = createPictureService({
    users: repos.users,
    dir: path.join(config.dataDirAbs, 'pictures'),
    publicBaseUrl: config.publicBaseUrl,
    patchUser: (id, values) => users.patch(id, values),
    logger,
  });
  const social = createSocialService({
    config,
    ...createSocialStores(config, sequelize, repos.authTokens, clock ?? (() => new Date())),
    transaction,
    users: repos.users,
    userService: users,
    hooks,
    signIn: signIn.signIn,
    audit,
    logger,
    clock,
  });
  return { services: { audit, webhooks, oidc, sessions, passwords, users, auth, signIn, pictures, ...flows, social }, notices };
}
