import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { AppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { Logger } from '../log/logger.js';
import type { Hooks, SignInClient, SignInMethod, TwoFactorMethodsPayload } from '../modules/hooks.js';
import { runAfterHooks } from './after-hooks.js';
import type { SessionService } from './session-service.js';
import type { AuditService } from '../audit/audit-service.js';
import type { Transaction } from '../data/unit-of-work.js';
import { signInFailed, signInSucceeded } from './sign-in-audit.js';
import { firstFactorAmr } from './sign-in-amr.js';

export interface SignInResult {
  /** 'pending' when the user has two-factor on: the session can only do the two-factor steps. */
  status: 'active' | 'pending';
  user: UserRecord;
  token: string;
  session: SessionRecord;
  /** Two-factor methods offered (handlers of 'auth.two_factor.methods'); [] when active. */
  methods: unknown[];
}

/**
 * What the first factor proved beyond itself. `factors: 2`: the proof was two factors at once (a
 * passkey with user verification: possession and a PIN or biometric), so a two-factor user gets a
 * full session with no second step, and the session is marked two-factor verified. Only a module whose
 * manifest declares `provesTwoFactors` may say so (module-context.ts). `amr` names what was used
 * (RFC 8176 values: `pwd`, `otp`, `hwk`, `swk`, `user`, `pin`, `mfa`), recorded in the sign-in event;
 * `details` are a few more facts for that event (`uv: true`).
 */
export interface SignInOptions {
  factors?: 1 | 2;
  amr?: string[];
  details?: Record<string, string | number | boolean>;
}

export interface SignInDeps {
  sessions: Pick<SessionService, 'create' | 'activate' | 'revokeById'>;
  hooks: Hooks;
  /** `sign_in.succeeded` is written in the transaction that opens (or activates) the full session. */
  audit: Pick<AuditService, 'record' | 'recordLater'>;
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  logger?: Logger;
  /** Counts a pending session finished by its second factor as a successful login. */
  onActivated?: () => void;
}

/**
 * The one sign-in seam. Every way of proving the first factor (password, mailed link or code, an
 * identity provider) ends here, so none can skip the second factor: the `before` hooks may refuse,
 * a two-factor user gets a pending session and the methods to finish with (or a full one from a
 * device the provider trusts), anyone else a full session and the 'auth.login' hooks.
 */
export function createSignIn(deps: SignInDeps) {
  /** Asks the two-factor provider (the module answering 'auth.two_factor.methods'). */
  async function ask(payload: Omit<TwoFactorMethodsPayload, 'methods' | 'provided' | 'trusted'>): Promise<TwoFactorMethodsPayload> {
    const p: TwoFactorMethodsPayload = { ...payload, methods: [], provided: false, trusted: false };
    await deps.hooks.run('auth.two_factor.methods', p);
    return p;
  }

  /**
   * At sign-in. Fails closed: a user with two-factor on and nothing answering (the providing module
   * switched off or uninstalled) gets 503 MODULE_DISABLED, never a full session.
   */
  async function secondFactor(payload: Omit<TwoFactorMethodsPayload, 'methods' | 'provided' | 'trusted'>): Promise<TwoFactorMethodsPayload> {
    const p = await ask(payload);
    if (!p.provided && p.methods.length === 0) {
      throw new AppError(503, Codes.MODULE_DISABLED, 'Two-factor authentication is unavailable; sign-in is refused until it is back');
    }
    return p;
  }

  /**
   * The methods a pending session may finish with (current-user reads of a pending session). A pending
   * session can do nothing else, so an empty list (no provider now) is an answer, not a refusal.
   */
  async function pendingMethods(user: UserRecord): Promise<unknown[]> {
    return (await ask({ user, session: null, method: null, client: null })).methods;
  }

  async function signIn(user: UserRecord, method: SignInMethod, client: SignInClient = {}, opts: SignInOptions = {}): Promise<SignInResult> {
    try {
      await deps.hooks.run('auth.sign_in.before', { user, method, client });
    } catch (err) {
      deps.audit.recordLater(signInFailed(method, 'refused', { user }));
      throw err;
    }
    const twoFactors = opts.factors === 2;
    // Two factors proved at once need no second step: the user's two-factor setting is satisfied.
    const pending = Boolean(user.two_factor) && !twoFactors;
    // The one place that says how a session signed in (RFC 8176 values only): stored with the session, read by the OpenID provider.
    const amr = firstFactorAmr(method, opts.amr);
    const input = { ip: client.ip, userAgent: client.userAgent, deviceId: client.deviceId, amr };
    const proved = { ...(opts.details ?? {}), ...(opts.amr?.length && amr.length ? { amr } : {}), ...(twoFactors ? { factors: 2 } : {}) };
    if (!pending) {
      // The full session and its sign_in.succeeded commit together: no session without its event.
      const { token, session } = await deps.transaction(async (tx) => {
        const opened = await deps.sessions.create(user.id, { ...input, status: 'active', twoFactors, signInMethod: method }, { tx });
        await deps.audit.record(signInSucceeded(user, method, opened.session, proved), { tx });
        return opened;
      });
      await runAfterHooks(deps.hooks, deps.logger, 'auth.login', { user, session, method });
      return { status: 'active', user, token, session, methods: [] };
    }
    // A pending session is no sign-in yet: its event is written when the second factor makes it full.
    const { token, session } = await deps.sessions.create(user.id, { ...input, status: 'pending_2fa', signInMethod: method });
    // The provider sees the pending session it is asked about; refused or failing, that session goes.
    let decided: TwoFactorMethodsPayload;
    try {
      decided = await secondFactor({ user, session, method, client });
    } catch (err) {
      await deps.sessions.revokeById(session.id).catch(() => undefined);
      deps.audit.recordLater(signInFailed(method, 'two_factor_unavailable', { user }));
      throw err;
    }
    if (!decided.trusted) return { status: 'pending', user, token, session, methods: decided.methods };
    // A device the provider trusts for this user skips the step: the same session, made full.
    const full = await deps.transaction(async (tx) => {
      const activated = await deps.sessions.activate(session.id, undefined, { tx, secondFactor: 'trusted_device' });
      if (activated) await deps.audit.record(signInSucceeded(user, method, activated, { ...proved, second_factor: 'trusted_device' }), { tx });
      return activated;
    });
    if (!full) throw new AppError(503, Codes.SERVICE_UNAVAILABLE, 'The session could not be opened; try again');
    await runAfterHooks(deps.hooks, deps.logger, 'auth.login', { user, session: full, method });
    return { status: 'active', user, token, session: full, methods: [] };
  }

  /**
   * A pending session whose second factor was proved becomes a full one (same id and token), with the
   * same 'auth.login' hooks as any sign-in; null when the session is gone, expired, not pending, or
   * not this user's. Its `sign_in.succeeded` (method `two_factor`) commits with the activation.
   */
  async function completePending(user: UserRecord, sessionId: string, method: SignInMethod): Promise<SessionRecord | null> {
    const session = await deps.transaction(async (tx) => {
      const activated = await deps.sessions.activate(sessionId, user.id, { tx });
      if (activated) await deps.audit.record(signInSucceeded(user, 'two_factor', activated, { second_factor: method }), { tx });
      return activated;
    });
    if (!session) return null;
    deps.onActivated?.();
    await runAfterHooks(deps.hooks, deps.logger, 'auth.login', { user, session, method });
    return session;
  }

  return { signIn, pendingMethods, completePending };
}

export type SignInService = ReturnType<typeof createSignIn>;
export type SignIn = SignInService['signIn'];
