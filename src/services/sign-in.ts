import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import type { Logger } from '../log/logger.js';
import type { Hooks, SignInClient, SignInMethod } from '../modules/hooks.js';
import { runAfterHooks } from './after-hooks.js';
import type { SessionService } from './session-service.js';

export interface SignInResult {
  /** 'pending' when the user has two-factor on: the session can only do the two-factor steps. */
  status: 'active' | 'pending';
  user: UserRecord;
  token: string;
  session: SessionRecord;
  /** Two-factor methods offered (handlers of 'auth.two_factor.methods'); [] when active. */
  methods: unknown[];
}

export interface SignInDeps {
  sessions: Pick<SessionService, 'create'>;
  hooks: Hooks;
  logger?: Logger;
}

/**
 * The one sign-in seam. Every way of proving the first factor (password, mailed link or code, an
 * identity provider) ends here, so none can skip the second factor: the `before` hooks may refuse,
 * a two-factor user gets a pending session and the methods to finish with, anyone else a full
 * session and the 'auth.login' hooks.
 */
export function createSignIn(deps: SignInDeps) {
  /** The methods a pending session may finish with; handlers of 'auth.two_factor.methods' push into the list. */
  async function pendingMethods(user: UserRecord, session: SessionRecord | null = null, method: SignInMethod | null = null): Promise<unknown[]> {
    const methods: unknown[] = [];
    await deps.hooks.run('auth.two_factor.methods', { user, session, method, methods });
    return methods;
  }

  async function signIn(user: UserRecord, method: SignInMethod, client: SignInClient = {}): Promise<SignInResult> {
    await deps.hooks.run('auth.sign_in.before', { user, method, client });
    const pending = Boolean(user.two_factor);
    const { token, session } = await deps.sessions.create(user.id, {
      ip: client.ip,
      userAgent: client.userAgent,
      deviceId: client.deviceId,
      status: pending ? 'pending_2fa' : 'active',
    });
    if (pending) return { status: 'pending', user, token, session, methods: await pendingMethods(user, session, method) };
    await runAfterHooks(deps.hooks, deps.logger, 'auth.login', { user, session, method });
    return { status: 'active', user, token, session, methods: [] };
  }

  return { signIn, pendingMethods };
}

export type SignInService = ReturnType<typeof createSignIn>;
export type SignIn = SignInService['signIn'];
