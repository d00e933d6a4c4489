import type { AppContext } from '../../app-context.js';
import type { SessionRecord } from '../../data/repositories/session-repository.js';
import { bridgeAnswer, bridgeHead as buildBridgeHead } from './bridge-answer.js';
import { AppError, isAppError } from '../../errors/app-error.js';
import { checkBridgeContext, effectiveMode } from '../../services/bridge-checks.js';
import { invalidSession, type ValidSession } from '../../services/session-service.js';
import { setSessionCookie } from '../cookies.js';
import { JsonText } from '../respond.js';
import type { PublicUser } from '../../services/user-view.js';
import { defineRoute } from '../define-route.js';
import { validationRead } from '../middleware/rate-limit-classes.js';
import { bridgeValidateBody, sessionIdBody, type BridgeValidateBody, type SessionIdBody } from '../schemas/auth.schemas.js';
import { iso, isPending, loginShape, pendingShape, sessionFields } from './auth-responses.js';

/** A full session counts as two-factor verified: it passed the step or its user has none. */
const sessionView = (s: SessionRecord) => ({
  id: s.id,
  status: s.status === 'active' ? 'active' : 'pending',
  two_factor_verified: s.status === 'active',
  created_at: iso(s.created_at),
  last_used_at: iso(s.last_used_at),
  expires_at: iso(s.expires_at),
  expiresAt: iso(s.expires_at),
});

/** The session behind a token, pending two-factor ones included; 401 without a token. */
function validSession(app: AppContext, token: string | null | undefined): Promise<ValidSession> {
  if (!token) throw invalidSession();
  return app.services.sessions.validate(token, { allowPending: true });
}

/** The validation answer of an active session. */
function activeAnswer(session: SessionRecord, user: PublicUser) {
  const exp = iso(session.expires_at);
  return { success: true, user, session: sessionView(session), expires_at: exp, expiresAt: exp };
}

async function validationAnswer(app: AppContext, token: string | null | undefined) {
  const { session, user } = await validSession(app, token);
  // Non-null: validSession refused a missing token already.
  if (isPending(session)) return pendingShape(app, user, token!);
  return activeObject(session, app.services.users.toPublic(user));
}

/**
 * Answer parts built once per session record and reused while it and its user view stay the same.
 * Cached records are replaced when a session or user changes, except lastUsedAt, which the session
 * service updates in place (at most once a minute); so that and the other mutable fields are compared.
 */
function perSession<T>(build: (s: SessionRecord, user: PublicUser) => T): (s: SessionRecord, user: PublicUser) => T {
  const memo = new WeakMap<SessionRecord, { user: PublicUser; lastUsed: unknown; expires: unknown; status: unknown; value: T }>();
  return (s, user) => {
    const hit = memo.get(s);
    if (hit && hit.user === user && hit.lastUsed === s.last_used_at && hit.expires === s.expires_at && hit.status === s.status) return hit.value;
    const value = build(s, user);
    memo.set(s, { user, lastUsed: s.last_used_at, expires: s.expires_at, status: s.status, value });
    return value;
  };
}

/**
 * The answer of an active session as objects, made once per session record: the GET answer is its
 * text, the POST one (whose text has the token in it, so is made per request: no token is kept in a
 * cache) wraps it. Frozen, as the public user view in it is: every answer about the session shares them.
 */
const activeObject = perSession((session, user) => {
  const answer = activeAnswer(session, user);
  Object.freeze(answer.session);
  return Object.freeze(answer);
});

/** The whole GET answer of an active session, serialised: the hot path of every app behind Gatehouse. */
const validationText = perSession((session, user) => new JsonText(JSON.stringify(activeObject(session, user))));

const meTexts = new WeakMap<PublicUser, JsonText>();
function meText(user: PublicUser): JsonText {
  let text = meTexts.get(user);
  if (!text) meTexts.set(user, (text = new JsonText(JSON.stringify({ success: true, data: { user } }))));
  return text;
}

/** The POST answer of an active session: the GET one plus the legacy client's `data`. */
function postAnswer(token: string, answer: ReturnType<typeof activeAnswer>) {
  const { user, session, expiresAt } = answer;
  const data = { sessionId: token, session_id: token, user, expiresAt, expires_at: expiresAt, lastUsedAt: session.last_used_at };
  return { ...answer, data };
}

/** The time now as ISO text, made once per millisecond (the bridge answer's timestamp: thousands a second). */
let lastMs = -1;
let lastIso = '';
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * The 200 answers of an active session (status active, not pending) as the routes below send them;
 * the fast lane (src/http/fast-lane) answers its cache hits with these, so both paths share one text.
 */
export const activeAnswers = {
  get: (app: AppContext, v: ValidSession): JsonText => validationText(v.session, app.services.users.toPublic(v.user)),
  /** GET /auth/me (the legacy current user): the same text while the user view is the same. */
  me: (app: AppContext, v: Pick<ValidSession, 'user'>): JsonText => meText(app.services.users.toPublic(v.user)),
  /** GET /auth/user/me: the token is in it, so it is made per request (no token is kept in a cache). */
  userMe: (app: AppContext, v: Pick<ValidSession, 'session' | 'user'>, token: string): JsonText => {
    const pub = app.services.users.toPublic(v.user);
    // `data` is the user itself plus a `user` copy: clients read both.
    return new JsonText(JSON.stringify({ success: true, user: pub, ...sessionFields(token, v.session), data: { ...pub, user: pub } }));
  },
  post: (app: AppContext, v: ValidSession, token: string): JsonText =>
    new JsonText(JSON.stringify(postAnswer(token, activeObject(v.session, app.services.users.toPublic(v.user))))),
  bridge: (app: AppContext, v: ValidSession): JsonText => {
    // Only where the answer came from and when differ between requests; the rest is the cached head
    // (objects: the whole answer is serialised at once).
    const perRequest = { cached: v.source !== 'db', cacheSource: CACHE_SOURCE[v.source], timestamp: isoNow() };
    return bridgeAnswer(bridgeHead(v.session, app.services.users.toPublic(v.user)), perRequest);
  },
};

/*
 * Where the validation reads take their session token, beyond the request's own (X-Session-ID, then
 * `?session_id=`, then the cookie: readSessionToken, as the route pipeline reads it). The routes below and
 * the fast lane (src/http/fast-lane), which answers these reads' cache hits itself, both read them here.
 */

/** POST /auth/validation: the body's `sessionId` or `session_id`, then the request's token. */
export const postedSessionToken = (body: Partial<SessionIdBody>, requestToken: string | null): string | null =>
  body.sessionId || body.session_id || requestToken || null;

/** POST /auth/bridge/validate: `?session_id=`, the body's `session_id` or `sessionId`, then X-Session-ID. */
export function bridgeSessionToken(query: Record<string, unknown>, body: Partial<BridgeValidateBody>, header: string | undefined): string | null {
  const q = query.session_id;
  return (typeof q === 'string' && q) || body.session_id || body.sessionId || header?.trim() || null;
}

/** The client context a bridge validation checks the session against (checkBridgeContext). */
export const bridgeContextOf = (config: Pick<AppContext['config'], 'bridgeValidationMode'>, body: Partial<BridgeValidateBody>) => ({
  mode: effectiveMode(config.bridgeValidationMode, body.validation_mode),
  ip: body.ip ?? body.ip_address,
  userAgent: body.user_agent,
  deviceId: body.device_id ?? body.device_fingerprint,
});

/** Missing, unknown and expired sessions all answer 401 "Invalid session" / "Session expired". */
export const validation = defineRoute({
  method: 'get',
  path: '/auth/validation',
  summary: 'Validate a session and get its user',
  auth: 'public',
  rateLimit: validationRead,
  async handler({ auth, app }) {
    const v = await validSession(app, auth.token);
    // A public route: validSession refused a missing token already.
    if (isPending(v.session)) return pendingShape(app, v.user, auth.token!);
    return activeAnswers.get(app, v);
  },
});

/**
 * The legacy client (pubflow 0.1) posts `{sessionId}` and reads its session from `data`
 * (`{sessionId, user, expiresAt, lastUsedAt}`); the answer is the GET one plus that `data`.
 */
export const validationPost = defineRoute({
  method: 'post',
  path: '/auth/validation',
  summary: 'Validate a session (legacy client form, session in the body)',
  auth: 'public',
  rateLimit: validationRead,
  body: sessionIdBody,
  async handler({ body, auth, app }) {
    const token = postedSessionToken(body, auth.token);
    const answer = await validationAnswer(app, token);
    if (!('session' in answer)) return answer;
    // Non-null: validationAnswer refused a missing token already (the answer has a 'session').
    return postAnswer(token!, answer);
  },
});

export const refresh = defineRoute({
  method: 'post',
  path: '/auth/refresh',
  summary: "Extend the current session's lifetime",
  auth: 'session',
  async handler({ res, auth, app }) {
    const v = await app.services.sessions.refresh(auth.token);
    if (auth.tokenSource === 'cookie') setSessionCookie(res, app.config, auth.token, new Date(v.session.expires_at), { refresh: true });
    return { ...loginShape(app, v.user, auth.token, v.session), message: 'Session refreshed' };
  },
});

/** Resolves the cookie after a social login (any token source works). */
export const sessionCurrent = defineRoute({
  method: 'get',
  path: '/auth/session/current',
  summary: 'The session behind the cookie (after a social sign-in)',
  auth: 'session-or-pending',
  rateLimit: validationRead,
  async handler({ auth, app }) {
    if (isPending(auth.session)) return pendingShape(app, auth.user, auth.token);
    return {
      success: true,
      requires_2fa: false,
      user: app.services.users.toPublic(auth.user),
      ...sessionFields(auth.token, auth.session),
    };
  },
});

const CACHE_SOURCE: Record<ValidSession['source'], string> = { local: 'ultra', shared: 'unified', db: 'db' };

/** The per-session head of the bridge answer, cached per session record and user view. */
const bridgeHead = perSession(buildBridgeHead);

/** Every failure carries valid:false (some callers read `success || valid`). */
const asInvalid = (err: unknown) =>
  isAppError(err) && err.status === 401 ? new AppError(401, err.code, err.message, undefined, { ...err.extra, valid: false }) : err;

/**
 * Backend-to-backend validation; benchmarked, so the warm path reads only caches (the session
 * service writes lastUsedAt at most once a minute, off the request).
 */
export const bridgeValidate = defineRoute({
  method: 'post',
  path: '/auth/bridge/validate',
  summary: "Validate a user's session for a backend (bridge secret)",
  auth: 'bridge',
  rateLimit: validationRead,
  body: bridgeValidateBody,
  async handler({ req, body, query, app }) {
    const token = bridgeSessionToken(query, body, req.get('x-session-id'));
    let v: ValidSession;
    try {
      if (!token) throw invalidSession();
      v = await app.services.sessions.validate(token, { allowPending: true });
      checkBridgeContext(v.session, bridgeContextOf(app.config, body));
    } catch (err) {
      throw asInvalid(err);
    }
    if (isPending(v.session)) return { ...(await pendingShape(app, v.user, token)), valid: false };
    return activeAnswers.bridge(app, v);
  },
});

export const invalidateMe = defineRoute({
  method: 'post',
  path: '/auth/invalidate/me',
  summary: 'Drop cached copies of your user and reload it',
  auth: 'session',
  rateLimit: 'cache-invalidation',
  async handler({ auth, app }) {
    await app.services.sessions.invalidateUser(auth.user.id);
    const fresh = await app.services.users.get(auth.user.id);
    return { success: true, message: 'User cache invalidated', data: { user: app.services.users.toPublic(fresh) } };
  },
});
