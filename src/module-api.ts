/**
 * The module API: the one file of core that modules (modules/<id>/**) import. Everything a module
 * needs from core comes through here, or through the ModuleContext its routes, hooks, jobs,
 * commands, exporters and erasers are given. A lint rule keeps it so (eslint.config.js), and core
 * never imports a module: the registry is handed to it at the composition root (entry/).
 * See docs/architecture.md.
 */
export { defineModule, ModuleManifestError } from './modules/define-module.js';
export type {
  ModuleCommand,
  ModuleCommandContext,
  ModuleDoctorCheck,
  ModuleEmail,
  ModuleEraser,
  ModuleErrorCode,
  ModuleExporter,
  ModuleHook,
  ModuleInput,
  ModuleJob,
  ModuleManifest,
  ModuleRateLimit,
  ModuleUninstallGuard,
  ModuleUserField,
  ProfileRefusal,
} from './modules/define-module.js';
// A module's reactions to security events (the manifest's `events`; the event table, src/app-events.ts).
export type { ModuleEventReaction } from './modules/define-module.js';
export type { AuditEvent } from './audit/audit-types.js';
export type {
  ModuleAccountSection,
  ModuleConsoleNav,
  ModuleConsolePage,
  ModulePageKit,
  ModulePostResult,
  ModuleSectionPost,
  ModuleUserPanel,
  ModuleWeb,
  ModuleWebPage,
} from './modules/module-web.js';
export { defineRoute } from './modules/module-route.js';
export type { AuthFor, MaybeSignedIn, ModuleHandlerArgs, ModuleRouteDef, SignedIn } from './modules/module-route.js';
export type { AuthMode, RateLimitClass, RouteLimit, UserType } from './http/route-shape.js';
export type {
  ModuleCache,
  ModuleContext,
  ModuleDb,
  ModuleHooks,
  ModuleKeys,
  ModuleLimits,
  ModuleMail,
  ModulePersonalData,
  ModuleSessions,
  ModuleSignInAttempts,
  ModuleUsers,
} from './modules/module-context.js';
export type { HookEvent, HookEvents, HookMatcher, HookPayload, SignInClient, SignInMethod, TwoFactorMethodsPayload } from './modules/hooks.js';
export { moduleEnvelope } from './modules/envelope.js';
export { perSession } from './http/middleware/rate-limit-classes.js';
export type { ModuleLimitClass } from './limits/limit-classes.js';
export { randomCode, randomToken, safeEqual } from './services/security/tokens.js';
/** A UUIDv7 (time-ordered: sorting by id is sorting by creation), as the audit record's ids, for keyset-paginated tables. */
export { eventId as timeOrderedId } from './audit/event-id.js';
export { maskEmail, maskPhone } from './mail/outbox.js';
export { normalizePhone } from './services/token-login-service.js';
/** The browser and system a User-Agent names ("Chrome", "Linux"), each absent when unknown: what session lists show. */
export { deviceParts } from './services/user-agent.js';
/** A client's network (IPv4 /24, IPv6 /48; IPv4-mapped IPv6 as IPv4), for counting per source rather than per address. */
export { ipNetworkKey } from './http/middleware/client-ip.js';
/** The one email rule (trimmed, lower-cased, at most 254 characters), as registration applies it. */
export { emailField as emailAddress } from './services/user-fields.js';
export { AppError, badRequest, forbidden, notFound, unauthorized, unavailable, isAppError } from './errors/app-error.js';
export { Codes } from './errors/codes.js';
export { invalidInput } from './errors/zod-issues.js';
/** A setting given as seconds or with a unit (90s, 15m, 1h, 7d), read as whole seconds, as core's durations are. */
export { duration as durationSetting } from './config/readers.js';
export type { MigrationContext, MigrationDef } from './data/migration-types.js';
export type { Transaction } from './data/unit-of-work.js';
export { isUniqueViolation } from './data/db-errors.js';
export type { UserRecord } from './data/repositories/user-repository.js';
export type { UserFieldDef } from './data/models/user.model.js';
export type { SessionRecord, SessionStatus } from './data/repositories/session-repository.js';
export type { PublicUser } from './services/user-view.js';
export type { SignInOptions, SignInResult } from './services/sign-in.js';
export type { ErasureResult } from './services/account-data.js';
export type { LimitResult } from './limits/rate-limiter.js';
export { assertAcceptableImage as checkImage } from './services/picture-service.js';
export type { ImageInfo } from './services/picture-service.js';
