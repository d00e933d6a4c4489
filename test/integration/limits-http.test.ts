import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreRoutes } from '../../src/http/routes/index.js';
import type { RateLimitClass, RouteLimit } from '../../src/http/middleware/rate-limit.js';
import { registrationOrAdmin } from '../../src/http/middleware/rate-limit-classes.js';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/test-app.js';

function expectLimitHeaders(r: TestResponse, limit: number): void {
  expect(r.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  const reset = Number(r.headers.get('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  // Unix seconds, within the window.
  expect(reset).toBeGreaterThan(now - 1);
  expect(reset).toBeLessThan(now + 3600 + 5);
}

// Any path without a route of its own is in the default class (the probes /health and /ready are not limited at all).
const DEFAULT_PATH = '/nope/default-class';

const parallel = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

describe('rate-limit headers on every answer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '1000/1h' } });
  });
  afterAll(async () => t?.close());

  it('when a route answers, then X-RateLimit-Limit/Remaining/Reset are set and Remaining counts down', async () => {
    const a = await t.request('GET', DEFAULT_PATH);
    const b = await t.request('GET', DEFAULT_PATH);
    expect(a.status).toBe(404);
    expectLimitHeaders(a, 1000);
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBe(Number(a.headers.get('x-ratelimit-remaining')) - 1);
    expect(b.headers.get('x-ratelimit-reset')).toBe(a.headers.get('x-ratelimit-reset'));
    expect(a.headers.get('retry-after')).toBeNull();
  });

  it('when the path does not exist, then the 404 carries the headers of the default class', async () => {
    const r = await t.request('GET', `/nope/${randomUUID()}`);
    expect(r.status).toBe(404);
    expectLimitHeaders(r, 1000);
  });

  it('when the JSON is malformed, over the size limit, or not JSON, then the 400, 413 and 415 carry the headers', async () => {
    const bad = await t.request('POST', '/health', { raw: '{"a":', headers: { 'Content-Type': 'application/json' } });
    expect(bad.status).toBe(400);
    expectLimitHeaders(bad, 1000);
    const big = await t.request('POST', '/nope', { raw: JSON.stringify({ x: 'a'.repeat(200 * 1024) }), headers: { 'Content-Type': 'application/json' } });
    expect(big.status).toBe(413);
    expectLimitHeaders(big, 1000);
    const form = await t.request('POST', '/auth/login', { raw: 'a=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    // Refused before any credential was checked: default, not the login class (credential-limits.ts).
    expectLimitHeaders(form, 1000);
  });

  it('when a CORS preflight is answered, then it carries the headers too', async () => {
    const r = await t.request('OPTIONS', '/health', { headers: { Origin: 'http://elsewhere.test', 'Access-Control-Request-Method': 'POST' } });
    expect(r.status).toBeLessThan(500);
    expectLimitHeaders(r, 1000);
  });

  it('when a request is answered, then it is counted once: the default budget drops by exactly one per request', async () => {
    const first = Number((await t.request('GET', `/nope/${randomUUID()}`)).headers.get('x-ratelimit-remaining'));
    const afterBad = await t.request('POST', '/nope', { raw: '{', headers: { 'Content-Type': 'application/json' } });
    const after404 = await t.request('GET', DEFAULT_PATH);
    expect(Number(afterBad.headers.get('x-ratelimit-remaining'))).toBe(first - 1);
    expect(Number(after404.headers.get('x-ratelimit-remaining'))).toBe(first - 2);
  });
});

describe('exact counts under parallel load', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '10/1m' } });
  });
  afterAll(async () => t?.close());

  it('when 50 requests arrive in parallel on a 10/1m route, then exactly 10 pass and 40 get 429 with Retry-After', async () => {
    const rs = await parallel(50, () => t.request('GET', DEFAULT_PATH));
    const ok = rs.filter((r) => r.status === 404);
    const refused = rs.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) {
      expect(r.body).toMatchObject({ success: false, error: 'Too many requests', code: 'RATE_LIMITED' });
      const retry = Number(r.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      expectLimitHeaders(r, 10);
    }
    const remaining = ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('when the budget is spent, then unknown paths and malformed bodies are refused too (one default budget)', async () => {
    const r404 = await t.request('GET', '/nope');
    const r400 = await t.request('POST', '/nope', { raw: '{', headers: { 'Content-Type': 'application/json' } });
    expect(r404.status).toBe(429);
    expect(r400.status).toBe(429);
    expect(r400.body.code).toBe('RATE_LIMITED');
  });
});

describe('probes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '3/1m' } });
  });
  afterAll(async () => t?.close());

  it('when a monitor polls /health, /ready and /metrics far beyond the default budget, then it never gets 429 and the budget is untouched', async () => {
    for (const path of ['/health', '/ready', '/metrics']) {
      const rs = await parallel(20, () => t.request('GET', path));
      expect(
        rs.map((r) => r.status),
        path,
      ).toEqual(new Array(20).fill(200));
      expect(
        rs.every((r) => r.headers.get('x-ratelimit-limit') === null),
        path,
      ).toBe(true);
    }
    const r = await t.request('GET', DEFAULT_PATH);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('2');
  });
});

describe('cross-origin callers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '2/1m', CORS_ORIGINS: 'https://app.example.test' } });
  });
  afterAll(async () => t?.close());

  it('when a browser origin is refused with 429, then the answer still carries CORS headers so the page can read Retry-After', async () => {
    const headers = { Origin: 'https://app.example.test' };
    const rs = [];
    for (let i = 0; i < 3; i++) rs.push(await t.request('GET', DEFAULT_PATH, { headers }));
    expect(rs.map((r) => r.status)).toEqual([404, 404, 429]);
    expect(rs[2].headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    expect(rs[2].headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(rs[2].headers.get('access-control-expose-headers')).toContain('X-RateLimit-Remaining');
  });
});

describe('two instances', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '10/1m' } });
    b = await startTestApp({ sharing: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it(
    BACKEND === 'pg'
      ? 'when two instances share Redis and 50 requests are spread over both, then they share one budget of 10'
      : 'when two instances run without Redis, then each keeps its own in-process budget of 10 (documented single-instance mode)',
    async () => {
      const rs = await parallel(50, (i) => (i % 2 ? a : b).request('GET', DEFAULT_PATH));
      const admitted = rs.filter((r) => r.status === 404).length;
      expect(rs.every((r) => r.status === 404 || r.status === 429)).toBe(true);
      expect(admitted).toBe(BACKEND === 'pg' ? 10 : 20);
    },
  );
});

// The limiter's own store failing needs Redis: registered in the PostgreSQL + Redis tier only.
if (BACKEND === 'pg')
  describe('when the limiter store fails', () => {
    let t: TestApp;
    let key = '';
    beforeAll(async () => {
      t = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '5/1m' } });
      key = `${t.env.REDIS_PREFIX}rl:default:127.0.0.1`;
    });
    afterAll(async () => t?.close());

    it('when Redis answers the limiter with an error, then requests are counted in process at half the budget, with headers, instead of 500', async () => {
      // A counter key of the wrong type makes the real Redis script fail (WRONGTYPE), no mock involved.
      await t.app.redis!.set(key, 'not-a-hash');
      const rs = await parallel(8, () => t.request('GET', DEFAULT_PATH));
      // Half of 5, rounded down: two pass, the rest are refused (see docs/operations.md).
      expect(rs.filter((r) => r.status === 404)).toHaveLength(2);
      expect(rs.filter((r) => r.status === 429)).toHaveLength(6);
      for (const r of rs) expectLimitHeaders(r, 2);
      // A refused command is not an outage: Redis stays in use.
      expect(t.app.redisHealth!.status().up).toBe(true);
      await t.app.redis!.del(key);
      const again = await parallel(8, () => t.request('GET', DEFAULT_PATH));
      expect(again.filter((r) => r.status === 404)).toHaveLength(5);
    });
  });

describe('route classes', () => {
  const figures: Record<RateLimitClass, number> = {
    default: 1001,
    login: 1002,
    registration: 1003,
    'token-login': 1004,
    'token-validate': 1005,
    'social-login': 1006,
    'social-api': 1007,
    'cache-invalidation': 1008,
    admin: 1009,
    bridge: 1010,
    'bridge-invalid': 1011,
    session: 1012,
    'module:two-factor:two-factor': 1013,
    'module:passkeys:passkeys': 1014,
    'oidc-authorization': 1015,
    'oidc-token': 1016,
    'oidc-client-auth': 1017,
    'email-change': 1018,
  };
  /** Where a request without session or bridge secret lands on a route with a classifier. */
  const anonymousClass = (limit: RouteLimit | undefined): RateLimitClass =>
    typeof limit === 'function'
      ? limit === registrationOrAdmin
        ? 'registration'
        : limit.classes.length === 1
          ? limit.classes[0]
          : 'default'
      : (limit ?? 'default');
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        RATE_LIMIT_DEFAULT: '1001/1h',
        RATE_LIMIT_LOGIN: '1002/1h',
        RATE_LIMIT_REGISTRATION: '1003/1h',
        RATE_LIMIT_TOKEN_LOGIN: '1004/1h',
        RATE_LIMIT_TOKEN_VALIDATE: '1005/1h',
        RATE_LIMIT_SOCIAL_LOGIN: '1006/1h',
        RATE_LIMIT_SOCIAL_API: '1007/1h',
        RATE_LIMIT_CACHE_INVALIDATION: '1008/1h',
        RATE_LIMIT_ADMIN: '1009/1h',
        RATE_LIMIT_BRIDGE: '1010/1h',
        RATE_LIMIT_BRIDGE_INVALID: '1011/1h',
        RATE_LIMIT_SESSION: '1012/1h',
        RATE_LIMIT_TWO_FACTOR: '1013/1h',
        RATE_LIMIT_PASSKEYS: '1014/1h',
        RATE_LIMIT_OIDC_AUTHORIZATION: '1015/1h',
        RATE_LIMIT_OIDC_TOKEN: '1016/1h',
        RATE_LIMIT_OIDC_CLIENT_AUTH: '1017/1h',
        RATE_LIMIT_EMAIL_CHANGE: '1018/1h',
        // On (no provider: nothing calls out), so the social routes answer rather than 503 "off".
        SOCIAL_LOGIN: 'true',
      },
    });
  });
  afterAll(async () => t?.close());

  it('when every core and module route is called, then each answer carries the figure of its own class, whatever its status', async () => {
    const routes = [...coreRoutes, ...t.app.modules.registry().flatMap((m) => m.routes)];
    expect(routes.length).toBeGreaterThan(10);
    const seen = new Set<string>();
    for (const def of routes) {
      const path = def.path.replace(/:(\w+)/g, 'x1');
      const r = await t.request(def.method.toUpperCase(), path, def.method === 'get' ? {} : { body: {} });
      // A route of a module that is not installed answers 503 MODULE_DISABLED, counted like any other.
      if (r.status === 503) expect(r.body.code, `${def.method} ${def.path}`).toBe('MODULE_DISABLED');
      else expect(r.status, `${def.method} ${def.path}`).toBeLessThan(500);
      if (def.rateLimit === false) {
        // Probes (/health, /ready, /metrics) are not limited at all.
        expect(r.headers.get('x-ratelimit-limit'), `${def.method} ${def.path}`).toBeNull();
        continue;
      }
      let cls = anonymousClass(def.rateLimit);
      // An empty body refused before any credential was checked leaves login and registration alone.
      if ((cls === 'login' || cls === 'registration') && (r.status === 400 || r.status === 415)) cls = 'default';
      expect(r.headers.get('x-ratelimit-limit'), `${def.method} ${def.path}`).toBe(String(figures[cls]));
      seen.add(cls);
    }
    expect(seen.size).toBeGreaterThanOrEqual(5);
    // The OpenID provider's endpoints (not in the route table: oidc-provider serves them).
    for (const [method, path, cls] of [
      ['GET', '/oidc/auth', 'oidc-authorization'],
      ['POST', '/oidc/token', 'oidc-token'],
      ['POST', '/oidc/token/introspection', 'oidc-token'],
      ['POST', '/oidc/token/revocation', 'oidc-token'],
      ['GET', '/oidc/jwks', 'default'],
    ] as const) {
      const r = await t.request(method, path, method === 'POST' ? { raw: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {});
      expect(r.status, `${method} ${path}`).toBeLessThan(500);
      expect(r.headers.get('x-ratelimit-limit'), `${method} ${path}`).toBe(String(figures[cls]));
    }
  });

  it('when a route with a class of its own is called, then the default budget is not charged as well', async () => {
    const before = Number((await t.request('GET', DEFAULT_PATH)).headers.get('x-ratelimit-remaining'));
    for (let i = 0; i < 3; i++) {
      const r = await t.request('POST', '/auth/login', { body: { email: 'nobody@example.test', password: 'wrong-password' } });
      expect(r.headers.get('x-ratelimit-limit')).toBe('1002');
    }
    const after = Number((await t.request('GET', DEFAULT_PATH)).headers.get('x-ratelimit-remaining'));
    expect(after).toBe(before - 1);
  });
});

describe('registration under parallel load', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_REGISTRATION: '3/1h' } });
  });
  afterAll(async () => t?.close());

  it('when 50 registrations arrive in parallel from one address, then exactly 3 are processed and 47 refused', async () => {
    const rs = await parallel(50, (i) =>
      t.request('POST', '/auth/register/public', { body: { email: `par${i}.${randomUUID()}@example.test`, password: 'Plenty-Long-Pass-42', name: 'P' } }),
    );
    const refused = rs.filter((r) => r.status === 429);
    expect(refused).toHaveLength(47);
    expect(rs.filter((r) => r.status !== 429).every((r) => r.status >= 200 && r.status < 300)).toBe(true);
    for (const r of refused) expect(r.body).toMatchObject({ success: false, error: 'Too many requests', code: 'RATE_LIMITED' });
    expect(await t.app.repos.users.count()).toBe(3);
  });
});
