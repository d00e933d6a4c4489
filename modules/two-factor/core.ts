/**
 * The two-factor module's one door into core: every import from src/ is here, wrapped to exactly what
 * the module needs (user read and the two_factor switch, session activation, mail and SMS, hooks,
 * settings, the server secret its keys derive from, the attempt limiter, its own tables' database).
 * When core's module API changes, this file is the one to follow it.
 */
import type { Response } from 'express';
import type { Sequelize, Transaction } from 'sequelize';
import type { AppContext } from '../../src/app-context.js';
import type { SessionRecord } from '../../src/data/repositories/session-repository.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { clearHttpOnlyCookie, setHttpOnlyCookie, setSessionCookie } from '../../src/http/cookies.js';
import { addressKey, classifier, type RateLimitClassifier } from '../../src/http/middleware/rate-limit.js';
import { readSessionToken } from '../../src/http/request-context.js';
import { loginShape } from '../../src/http/routes/auth-responses.js';
import type { LimitResult, LimitRule } from '../../src/limits/rate-limiter.js';
import { maskEmail, maskPhone } from '../../src/mail/outbox.js';
import { runAfterHooks } from '../../src/services/after-hooks.js';
import { normalizePhone } from '../../src/services/token-login-service.js';

export type { AppContext, SessionRecord, Transaction, UserRecord };
export type { MigrationDef } from '../../src/data/migration-types.js';
export type { ModuleCommand, ModuleUninstallGuard } from '../../src/modules/define-module.js';
export type { SecondFactorPayload } from '../../src/services/second-factor.js';
export { defineModule } from '../../src/modules/define-module.js';
export { defineRoute } from '../../src/http/define-route.js';
export { AppError, badRequest, forbidden, notFound, unavailable, isAppError } from '../../src/errors/app-error.js';
export { Codes } from '../../src/errors/codes.js';
export { TWO_FACTOR_METHODS_EVENT } from '../../src/services/second-factor.js';
export { randomCode, randomToken, safeEqual } from '../../src/services/security/tokens.js';
export { maskEmail, maskPhone, normalizePhone };

export const MODULE_ID = 'two-factor';

/* Users */

export const findUser = (app: AppContext, id: string) => app.repos.users.findById(id);
export const findUserByEmail = (app: AppContext, email: string) => app.repos.users.findByEmail(email.trim().toLowerCase());
export const publicUser = (app: AppContext, user: UserRecord) => app.services.users.toPublic(user);

/** Sets users.two_factor inside the caller's transaction; call forgetUser after the commit. */
export async function writeTwoFactorFlag(app: AppContext, userIds: string | string[], on: boolean, transaction: Transaction): Promise<void> {
  const ids = Array.isArray(userIds) ? userIds : [userIds];
  if (!ids.length) return;
  await app.sequelize.query(`UPDATE users SET two_factor = ?, updated_at = ? WHERE id IN (${ids.map(() => '?').join(', ')})`, {
    replacements: [on, new Date(), ...ids],
    transaction,
  });
}

/** Ids of users with two-factor on (the uninstall guard). */
export async function usersWithTwoFactor(app: AppContext, transaction?: Transaction): Promise<string[]> {
  const [rows] = await app.sequelize.query('SELECT id FROM users WHERE two_factor = ?', { replacements: [true], transaction });
  return (rows as { id: string }[]).map((r) => r.id);
}

/** Drops cached copies of a user everywhere (after its row changed), and tells observers. */
export async function forgetUser(app: AppContext, userId: string): Promise<void> {
  await app.services.sessions.invalidateUser(userId);
  const user = await app.repos.users.findById(userId);
  if (user) await runAfterHooks(app.hooks, app.logger, 'user.updated', { user });
}

/* Sessions */

/** Turns the pending session into a full one (same id, full lifetime) and runs the sign-in hooks. */
export async function activateSession(app: AppContext, user: UserRecord, sessionId: string): Promise<SessionRecord | null> {
  const session = await app.services.sessions.activate(sessionId);
  if (session) {
    app.metrics.login('success');
    await runAfterHooks(app.hooks, app.logger, 'auth.login', { user, session });
  }
  return session;
}

export const revokeOtherSessions = (app: AppContext, userId: string, exceptSessionId?: string) =>
  app.services.sessions.revokeAllForUser(userId, exceptSessionId);

/** The login answer's fields: `{success, user, sessionId, session_id, expiresAt, expires_at}`. */
export const loginFields = (app: AppContext, user: UserRecord, token: string, session: SessionRecord) => loginShape(app, user, token, session);

export const setSession = (res: Response, app: AppContext, token: string, session: SessionRecord) =>
  setSessionCookie(res, app.config, token, new Date(session.expires_at));
export const setCookie = (res: Response, app: AppContext, name: string, value: string, expires: Date) => setHttpOnlyCookie(res, app.config, name, value, expires);
export const clearCookie = (res: Response, app: AppContext, name: string) => clearHttpOnlyCookie(res, app.config, name);

/* Mail and SMS */

export interface ModuleMail {
  to: string;
  /** A message in modules/two-factor/emails/<lang>/. */
  template: string;
  lang?: string | null;
  data: Record<string, string | number | undefined>;
}

/** Sends a code: a failure is the caller's answer (503), since the user waits for it. */
export async function sendMail(app: AppContext, msg: ModuleMail): Promise<void> {
  await app.services.mailer.send({ ...msg, template: `${MODULE_ID}/${msg.template}` as `${string}/${string}` });
}

/** Sends a notice: a failure is logged, never thrown (the change it reports is done). */
export async function sendNotice(app: AppContext, msg: ModuleMail): Promise<void> {
  await sendMail(app, msg).catch((err: Error) =>
    app.logger.warn({ module: MODULE_ID, template: msg.template, to: maskEmail(msg.to), reason: err.message }, 'two-factor notice not sent'),
  );
}

export const sendSms = async (app: AppContext, to: string, body: string): Promise<void> => {
  await app.services.sms.send(to, body);
};

/* Settings and keys */

export const moduleConfig = <T>(app: AppContext): T => app.modules.config<T>(MODULE_ID);
export const productName = (app: AppContext) => app.config.productName;
export const trustedDeviceTtlSec = (app: AppContext) => app.config.trustedDeviceTtl;
export const isEnabled = (app: AppContext) => app.modules.isEnabled(MODULE_ID);

/** The server secret the module's keys derive from (COOKIE_SECRET, else BRIDGE_VALIDATION_SECRET); null when neither is set. */
export const serverSecret = (app: AppContext): string | null => app.config.cookieSecret ?? app.config.bridgeSecret ?? null;

/* Attempts (atomic on both backends: in-process, or one Lua script in Redis) */

export const consumeAttempt = (app: AppContext, bucket: string, key: string, rule: LimitRule): Promise<LimitResult> => app.limiter.consume(bucket, key, rule);
export const refundAttempt = (app: AppContext, bucket: string, key: string): Promise<void> => app.limiter.refund(bucket, key);

/**
 * The `two-factor` rate-limit class, counted per session when the request carries one that is live
 * (pending included), else per address.
 */
export const twoFactorLimit: RateLimitClassifier = classifier(['two-factor'], async (req, app) => {
  let id: string | null = null;
  try {
    id = await app.services.sessions.liveSessionId(readSessionToken(req).token);
  } catch {
    id = null;
  }
  return { cls: 'two-factor', key: id ? `session:${id}` : addressKey(req) };
});

/* Database: the module's own tables only */

export const database = (app: AppContext): Sequelize => app.sequelize;
export const inTransaction = <T>(app: AppContext, fn: (t: Transaction) => Promise<T>): Promise<T> => app.sequelize.transaction(fn);
export const log = (app: AppContext) => app.logger.child({ module: MODULE_ID });
