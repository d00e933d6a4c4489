import { describe, expect, it } from 'vitest';
import { createAuthService, type AuthServiceDeps } from '../../src/services/auth-service.js';
import { createHooks } from '../../src/modules/hooks.js';
import type { LoginBackoff } from '../../src/limits/login-backoff.js';

const failingStore: LoginBackoff = {
  reserve: async () => {
    throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
  },
  recordFailure: async () => {},
  recordSuccess: async () => {},
  release: async () => {},
};

function service(backoff: LoginBackoff) {
  let looked = 0;
  const deps = {
    users: { findByLogin: async () => (looked++, null) },
    userService: {},
    sessions: {},
    passwords: { verify: async () => false, hash: async () => 'x' },
    hooks: createHooks(),
    backoff,
    audit: { recordLater: () => undefined },
    config: { requireEmailVerification: false, registrationEnabled: true },
  } as unknown as AuthServiceDeps;
  return { auth: createAuthService(deps), looked: () => looked };
}

describe('login backoff store failures', () => {
  it('when the backoff store fails, then login answers 503 and checks no password', async () => {
    const { auth, looked } = service(failingStore);
    await expect(auth.login('a@example.test', 'whatever-123')).rejects.toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(looked()).toBe(0);
  });

  it('when the backoff refuses, then the 429 carries retry_after', async () => {
    const { auth } = service({ ...failingStore, reserve: async () => ({ allowed: false, retryAfterSec: 42, failures: 9 }) });
    await expect(auth.login('a@example.test', 'whatever-123')).rejects.toMatchObject({ status: 429, extra: { retry_after: 42 } });
  });
});
