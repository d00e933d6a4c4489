import type { Request, Response } from 'express';
import type { Config } from '../../config/schema.js';
import type { SessionRecord } from '../../data/repositories/session-repository.js';
import type { UserRecord } from '../../data/repositories/user-repository.js';
import type { ClientInfo } from '../../services/auth-service.js';
import type { PublicUser } from '../../services/user-view.js';
import type { SignInService } from '../../services/sign-in.js';
import type { UserService } from '../../services/user-service.js';
import { setSessionCookie } from '../cookies.js';
import { parseCookies } from '../request-context.js';
import type { SignInResult } from '../../services/sign-in.js';

/**
 * Response shapes shared by the login-like routes (the contract's spellings, snake and camel), and
 * by modules that sign users in (ModuleContext.signInAnswer): what they read of the app, narrowly.
 */
export interface AnswerDeps {
  services: { users: Pick<UserService, 'toPublic'>; signIn: Pick<SignInService, 'pendingMethods'> };
}

export const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);

export const clientInfo = (req: Request): ClientInfo => ({
  ip: req.ip ?? req.socket.remoteAddress ?? null,
  userAgent: req.get('user-agent') ?? null,
  deviceId: deviceIdOf(req),
  trustedDevice: trustedDeviceOf(req),
});

/**
 * Aborts when the connection closes before the answer has been written: the caller has gone, and
 * work still queued for it (a login waiting for a bcrypt slot) can be dropped.
 */
export function answerAbandoned(res: Response): AbortSignal {
  const ctrl = new AbortController();
  if (res.destroyed) ctrl.abort();
  else res.once('close', () => res.writableEnded || ctrl.abort());
  return ctrl.signal;
}

/** The trusted-device token a browser keeps as the `trusted_device` cookie, or an app sends as X-Trusted-Device. */
function trustedDeviceOf(req: Request): string | null {
  const v = req.get('x-trusted-device') ?? parseCookies(req.headers.cookie).trusted_device;
  return typeof v === 'string' && v.trim() && v.length <= 200 ? v.trim() : null;
}

/** A client-chosen device id (header X-Device-ID, or device_id / deviceId in the body), bound to the session for strict bridge checks. */
function deviceIdOf(req: Request): string | null {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const v = req.get('x-device-id') ?? body.device_id ?? body.deviceId;
  return typeof v === 'string' && v.trim() && v.length <= 128 ? v.trim() : null;
}

/** The session id is the token itself: it is what clients send back as X-Session-ID. */
export function sessionFields(token: string, session: SessionRecord) {
  const exp = iso(session.expires_at);
  return { sessionId: token, session_id: token, expiresAt: exp, expires_at: exp };
}

/** `{success, user, sessionId, session_id, expiresAt, expires_at}`: login, refresh, token login. */
export function loginShape(app: AnswerDeps, user: UserRecord, token: string, session: SessionRecord) {
  return { success: true, user: app.services.users.toPublic(user), ...sessionFields(token, session) };
}

/**
 * What a pending two-factor session learns about its user: enough to show "code sent to …",
 * not the profile the second factor protects.
 */
function pendingUser(u: PublicUser) {
  const { id, email, name, last_name, user_name, user_type, picture, two_factor } = u;
  return { id, email, name, last_name, user_name, user_type, picture, two_factor };
}

/** HTTP 200 with success:false, as the clients need to recognise the two-factor step. */
export async function pendingShape(app: AnswerDeps, user: UserRecord, token: string, methods?: unknown[]) {
  return {
    success: false,
    requires_2fa: true,
    message: 'Two-factor authentication required',
    sessionId: token,
    session_id: token,
    available_methods: methods ?? (await app.services.signIn.pendingMethods(user)),
    user: pendingUser(app.services.users.toPublic(user)),
  };
}

/**
 * The answer of POST /auth/login to a sign-in (also a module's, ModuleContext.signInAnswer): the body,
 * and the session cookie — a pending session gets it too, so cookie-only browsers can finish the
 * two-factor step.
 */
export async function signInAnswer(app: AnswerDeps & { config: Config }, res: Response, r: SignInResult) {
  setSessionCookie(res, app.config, r.token, new Date(r.session.expires_at));
  if (r.status === 'pending') return pendingShape(app, r.user, r.token, r.methods);
  return { ...loginShape(app, r.user, r.token, r.session), message: 'Login successful' };
}

export const isPending = (s: SessionRecord) => s.status !== 'active';
