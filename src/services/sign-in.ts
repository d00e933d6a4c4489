import type { UserRecord } from '../data/repositories/user-repository.js';
import type { Logger } from '../log/logger.js';
import type { Hooks } from '../modules/hooks.js';
import { runAfterHooks } from './after-hooks.js';
import type { ClientInfo, LoginResult } from './auth-service.js';
import type { SessionService } from './session-service.js';

export interface SignInDeps {
  sessions: Pick<SessionService, 'create'>;
  hooks: Hooks;
  logger?: Logger;
}

/**
 * The last step of every way of signing in, once the user is proven: a full session, or a pending
 * two-factor one when the user has two-factor on (the methods offered gathered through the
 * 'auth.two_factor.methods' hook), then the 'auth.login' after-hook for a full one. It does what
 * password login does today (auth-service.ts); `method` names the way in ('password', 'social:github'…)
 * for the hooks. Issue 11 extracts the same decision into one core seam: point this at it.
 */
export function createSignIn(deps: SignInDeps) {
  return {
    async completeSignIn(user: UserRecord, client: ClientInfo, method: string): Promise<LoginResult> {
      const pending = Boolean(user.two_factor);
      const { token, session } = await deps.sessions.create(user.id, { ...client, status: pending ? 'pending_2fa' : 'active' });
      if (pending) {
        const methods: unknown[] = [];
        await deps.hooks.run('auth.two_factor.methods', { user, methods, method });
        return { status: 'pending', user, token, session, methods };
      }
      await runAfterHooks(deps.hooks, deps.logger, 'auth.login', { user, session, method });
      return { status: 'active', user, token, session, methods: [] };
    },
  };
}

export type SignIn = ReturnType<typeof createSignIn>;
