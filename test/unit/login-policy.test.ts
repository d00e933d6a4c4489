import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../../src/limits/memory-limiter.js';
import { accountId, accountNetworkKey, createLoginPolicy, LOGIN_ACCOUNT, LOGIN_ACCOUNT_ALL } from '../../src/limits/login-policy.js';
import type { RateLimiter } from '../../src/limits/rate-limiter.js';

const LOGIN = { points: 5, durationSec: 900 };
const IP = '203.0.113.7';
const ADDRESS_HIT = { bucket: 'login', key: IP };

function setup(opts: { enabled?: boolean; accountAll?: { points: number; durationSec: number } } = {}) {
  const limiter = createMemoryRateLimiter();
  const limited: string[] = [];
  const warnings: string[] = [];
  const policy = createLoginPolicy({
    limiter,
    logger: { warn: (_o, msg) => warnings.push(msg) },
    metrics: { rateLimited: (cls) => limited.push(cls) },
    config: { rateLimitsEnabled: opts.enabled ?? true, rateLimitLogin: LOGIN, rateLimitLoginAccount: opts.accountAll },
  });
  /** What is left of a budget, read by counting one more hit and giving it back. */
  const left = async (bucket: string, key: string, rule = LOGIN) => {
    const r = await limiter.consume(bucket, key, rule);
    await limiter.refund(bucket, key);
    return r.remaining;
  };
  return { limiter, policy, limited, warnings, left };
}

/** A driver error as Sequelize raises it while the database is unreachable. */
const databaseDown = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { name: 'SequelizeConnectionRefusedError' });
const wrongPassword = () => Object.assign(new Error('Invalid credentials'), { status: 401 });

describe('login policy: per-account budgets', () => {
  it('when an attempt is counted, then the account budget of its network and the shared one each hold one hit', async () => {
    const { policy, left } = setup();
    const attempt = await policy.consume({ identifier: ' Bob@Example.test ', ip: IP });
    expect(attempt.allowed).toBe(true);
    expect(attempt.results.map((r) => r.remaining)).toEqual([4, 49]);
    expect(attempt.backoffKey).toBe(accountNetworkKey('bob@example.test', IP));
    expect(await left(LOGIN_ACCOUNT, accountNetworkKey('bob@example.test', IP))).toBe(3);
    expect(await left(LOGIN_ACCOUNT_ALL, accountId('BOB@example.test'), { points: 50, durationSec: 900 })).toBe(48);
  });

  it("when one network has spent its share, then it is refused without spending the account's shared budget", async () => {
    const { policy, limited, left } = setup();
    for (let i = 0; i < 5; i++) expect((await policy.consume({ identifier: 'eve@example.test', ip: IP })).allowed).toBe(true);
    const refused = await policy.consume({ identifier: 'eve@example.test', ip: IP });
    expect(refused.allowed).toBe(false);
    expect(refused.results).toHaveLength(1);
    expect(refused.results[0]).toMatchObject({ allowed: false, remaining: 0 });
    expect(limited).toEqual([LOGIN_ACCOUNT]);
    expect(await left(LOGIN_ACCOUNT_ALL, accountId('eve@example.test'), { points: 50, durationSec: 900 })).toBe(44);
    // Another network still gets its own share.
    expect((await policy.consume({ identifier: 'eve@example.test', ip: '198.51.100.1' })).allowed).toBe(true);
    await expect(refused.check(async () => 'checked')).rejects.toThrow(/refused/);
  });
});

describe('login policy: the refund rule', () => {
  it('when the check fails because the database is down, then every hit the attempt holds goes back, the held address hit too', async () => {
    const { limiter, policy, left } = setup();
    await limiter.consume(ADDRESS_HIT.bucket, ADDRESS_HIT.key, LOGIN);
    const attempt = await policy.consume({ identifier: 'ann@example.test', ip: IP, held: [ADDRESS_HIT] });
    await expect(attempt.check(async () => Promise.reject(databaseDown()))).rejects.toMatchObject({ name: 'SequelizeConnectionRefusedError' });
    expect(await left('login', IP)).toBe(4);
    expect(await left(LOGIN_ACCOUNT, accountNetworkKey('ann@example.test', IP))).toBe(4);
    expect(await left(LOGIN_ACCOUNT_ALL, accountId('ann@example.test'), { points: 50, durationSec: 900 })).toBe(49);
  });

  it('when the check fails through the caller (a wrong password), then nothing goes back', async () => {
    const { limiter, policy, left } = setup();
    await limiter.consume(ADDRESS_HIT.bucket, ADDRESS_HIT.key, LOGIN);
    const attempt = await policy.consume({ identifier: 'ann@example.test', ip: IP, held: [ADDRESS_HIT] });
    await expect(attempt.check(async () => Promise.reject(wrongPassword()))).rejects.toThrow('Invalid credentials');
    expect(await left('login', IP)).toBe(3);
    expect(await left(LOGIN_ACCOUNT, accountNetworkKey('ann@example.test', IP))).toBe(3);
  });

  it('when the check succeeds, then it answers what the check answered and keeps the hits, passing the backoff key', async () => {
    const { policy, left } = setup();
    const attempt = await policy.consume({ identifier: 'ann@example.test', ip: IP });
    expect(await attempt.check(async (key) => `checked ${key}`)).toBe(`checked ${accountNetworkKey('ann@example.test', IP)}`);
    expect(await left(LOGIN_ACCOUNT, accountNetworkKey('ann@example.test', IP))).toBe(3);
  });

  it('when other attempts ran in between and the check fails twice, then only this attempt’s hits go back, once', async () => {
    const { policy, left } = setup();
    const first = await policy.consume({ identifier: 'ann@example.test', ip: IP });
    await policy.consume({ identifier: 'ann@example.test', ip: IP });
    // The same attempt failing twice (a retry inside the check) gives back once.
    await expect(first.check(async () => Promise.reject(databaseDown()))).rejects.toThrow();
    await expect(first.check(async () => Promise.reject(databaseDown()))).rejects.toThrow();
    expect(await left(LOGIN_ACCOUNT, accountNetworkKey('ann@example.test', IP))).toBe(3);
  });

  it('when limits are off, then nothing is counted and nothing is given back', async () => {
    const { limiter, policy, left } = setup({ enabled: false });
    await limiter.consume(ADDRESS_HIT.bucket, ADDRESS_HIT.key, LOGIN);
    const attempt = await policy.consume({ identifier: 'ann@example.test', ip: IP, held: [ADDRESS_HIT] });
    expect(attempt).toMatchObject({ allowed: true, results: [] });
    await expect(attempt.check(async () => Promise.reject(databaseDown()))).rejects.toThrow();
    expect(await left('login', IP)).toBe(3);
  });

  it('when the store fails while giving back, then the check still rethrows its own error and a warning is logged', async () => {
    const { limiter, warnings } = setup();
    const broken: RateLimiter = { ...limiter, refund: async () => Promise.reject(new Error('redis down')) };
    const policy = createLoginPolicy({
      limiter: broken,
      logger: { warn: (_o, msg) => warnings.push(msg) },
      metrics: { rateLimited: () => undefined },
      config: { rateLimitsEnabled: true, rateLimitLogin: LOGIN, rateLimitLoginAccount: undefined },
    });
    const attempt = await policy.consume({ identifier: 'ann@example.test', ip: IP });
    await expect(attempt.check(async () => Promise.reject(databaseDown()))).rejects.toMatchObject({ name: 'SequelizeConnectionRefusedError' });
    expect(warnings).toEqual(['could not refund a login attempt']);
  });
});
