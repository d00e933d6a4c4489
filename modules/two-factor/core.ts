/**
 * The two-factor module's one door into core: every import from core is here, and comes from the
 * module API (src/module-api.ts) only, wrapped to exactly what the module needs on top of the
 * ModuleContext its routes, hooks and commands get (users.patch for the two_factor switch, session
 * activation through the sign-in seam, mail and SMS, settings, derived keys, limits, its own tables).
 */
import type { Response } from 'express';
import { maskEmail, perSession, type ModuleContext, type SessionRecord, type Transaction, type UserRecord } from '../../src/module-api.js';

export type { ModuleContext, SessionRecord, Transaction, UserRecord };
export type { MigrationDef, ModuleCommand, ModuleUninstallGuard, TwoFactorMethodsPayload } from '../../src/module-api.js';
export { defineModule, defineRoute } from '../../src/module-api.js';
export { AppError, badRequest, forbidden, notFound, unavailable, isAppError, Codes } from '../../src/module-api.js';
export { randomCode, randomToken, safeEqual, maskEmail, maskPhone, normalizePhone, emailAddress } from '../../src/module-api.js';

export const MODULE_ID = 'two-factor';

/* Users */

export const findUser = (ctx: ModuleContext, id: string) => ctx.users.find(id);
export const findUserByEmail = (ctx: ModuleContext, email: string) => ctx.users.findByEmail(email.trim().toLowerCase());
export const publicUser = (ctx: ModuleContext, user: UserRecord) => ctx.users.toPublic(user);

/** Sets users.two_factor through the one user writer, inside the caller's transaction (caches and 'user.updated' follow the commit). */
export async function writeTwoFactorFlag(ctx: ModuleContext, userIds: string | string[], on: boolean, tx: Transaction): Promise<void> {
  for (const id of Array.isArray(userIds) ? userIds : [userIds]) await ctx.users.setTwoFactor(id, on, { tx });
}

/** Ids of users with two-factor on (the uninstall guard). */
export const usersWithTwoFactor = (ctx: ModuleContext, tx?: Transaction): Promise<string[]> => ctx.users.idsWhere({ two_factor: true }, { tx });

/* Sessions */

/** How the module names its step in the 'auth.login' hooks of a session it finishes. */
export const SIGN_IN_METHOD = 'two-factor';

/** Turns the pending session into a full one (same id, full lifetime) through the sign-in seam, with its 'auth.login' hooks. */
export const activateSession = (ctx: ModuleContext, user: UserRecord, sessionId: string): Promise<SessionRecord | null> =>
  ctx.sessions.activate(sessionId, { user, method: SIGN_IN_METHOD });

export const revokeOtherSessions = (ctx: ModuleContext, userId: string, exceptSessionId?: string) => ctx.sessions.revokeAll(userId, { exceptSessionId });

const iso = (d: Date | string) => new Date(d).toISOString();

/** The login answer's fields: `{success, user, sessionId, session_id, expiresAt, expires_at}` (the contract's spellings). */
export function loginFields(ctx: ModuleContext, user: UserRecord, token: string, session: SessionRecord) {
  const exp = iso(session.expires_at);
  return { success: true, user: ctx.users.toPublic(user), sessionId: token, session_id: token, expiresAt: exp, expires_at: exp };
}

export const setSession = (res: Response, ctx: ModuleContext, token: string, session: SessionRecord) =>
  ctx.cookies.setSession(res, token, new Date(session.expires_at));
export const setCookie = (res: Response, ctx: ModuleContext, name: string, value: string, expires: Date) => ctx.cookies.set(res, name, value, expires);
export const clearCookie = (res: Response, ctx: ModuleContext, name: string) => ctx.cookies.clear(res, name);

/* Mail and SMS */

export interface ModuleMail {
  to: string;
  /** A message in modules/two-factor/emails/<lang>/ (declared in the manifest's emails). */
  template: string;
  lang?: string | null;
  data: Record<string, string | number | undefined>;
}

/** Sends a code: a failure is the caller's answer (503), since the user waits for it. */
export const sendMail = (ctx: ModuleContext, msg: ModuleMail): Promise<void> => ctx.mail.send(msg);

/** Sends a notice: a failure is logged, never thrown (the change it reports is done). */
export async function sendNotice(ctx: ModuleContext, msg: ModuleMail): Promise<void> {
  await sendMail(ctx, msg).catch((err: Error) =>
    ctx.logger.warn({ template: msg.template, to: maskEmail(msg.to), reason: err.message }, 'two-factor notice not sent'),
  );
}

export const sendSms = (ctx: ModuleContext, to: string, body: string): Promise<void> => ctx.sms.send(to, body);

/* Settings */

export const moduleConfig = <T>(ctx: ModuleContext): T => ctx.config<T>();
export const productName = (ctx: ModuleContext) => ctx.site.productName;
export const trustedDeviceTtlSec = (ctx: ModuleContext) => ctx.auth.trustedDeviceTtlSec;
export const isEnabled = (ctx: ModuleContext) => ctx.modules.isEnabled(ctx.id);

/* Attempts: classes declared in the manifest, budgets from the module's settings (atomic on both backends) */

export const consumeAttempt = (ctx: ModuleContext, cls: string, key: string, rule: { points: number; durationSec: number }) =>
  ctx.limits.consume(cls, key, rule);
export const refundAttempt = (ctx: ModuleContext, cls: string, key: string): Promise<void> => ctx.limits.refund(cls, key);

/** The module's `two-factor` rate-limit class (RATE_LIMIT_TWO_FACTOR, declared in index.ts), counted per session when the request carries a live one (pending included), else per address. */
export const twoFactorLimit = perSession('module:two-factor:two-factor');

/* Database: the module's own tables only */

export const inTransaction = <T>(ctx: ModuleContext, fn: (tx: Transaction) => Promise<T>): Promise<T> => ctx.db.transaction(fn);
export const log = (ctx: ModuleContext) => ctx.logger;
