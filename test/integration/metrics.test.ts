import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScheduler } from '../../src/jobs/scheduler.js';
import { DEFAULT_PASSWORD, makeSession, makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/** The value of one series in Prometheus text (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

describe('/metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN } });
  });
  afterAll(async () => t?.close());

  it('when a local client scrapes after traffic, then requests, logins, hashes, cache lookups, sessions and process metrics are there', async () => {
    const user = await makeUser(t);
    const ok = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    expect(ok.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      expect((await t.request('POST', '/auth/login', { body: { email: user.email, password: 'Wrong-Password-1' } })).status).toBe(401);
    }
    for (let i = 0; i < 3; i++) expect((await t.request('GET', '/auth/me', { session: ok.body.session_id })).status).toBe(200);
    await t.request('GET', '/auth/admin/users/12345');
    await t.request('GET', `/no/such/path/${Date.now()}`);

    const r = await t.request('GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = r.text;
    expect(sample(m, 'gatehouse_http_requests_total', { method: 'POST', route: '/auth/login', status: '200' })).toBe(1);
    expect(sample(m, 'gatehouse_http_requests_total', { method: 'POST', route: '/auth/login', status: '401' })).toBe(2);
    // Templates, not raw paths: the id and the unknown path do not become labels.
    expect(sample(m, 'gatehouse_http_requests_total', { route: '/auth/admin/users/:id', status: '401' })).toBe(1);
    expect(sample(m, 'gatehouse_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(m).not.toContain('/no/such/path');
    expect(sample(m, 'gatehouse_http_request_duration_seconds_count', { method: 'GET', route: '/auth/me' })).toBe(3);
    expect(sample(m, 'gatehouse_logins_total', { outcome: 'success' })).toBe(1);
    expect(sample(m, 'gatehouse_logins_total', { outcome: 'failure' })).toBe(2);
    // makeUser hashed once, the logins verified three times.
    expect(sample(m, 'gatehouse_bcrypt_duration_seconds_count')).toBeGreaterThanOrEqual(4);
    const local = sample(m, 'gatehouse_cache_lookups_total', { cache: 'session', result: 'local' }) ?? 0;
    const fromDb = sample(m, 'gatehouse_cache_lookups_total', { cache: 'session', result: 'db' }) ?? 0;
    expect(local + fromDb).toBe(3);
    expect(local).toBeGreaterThanOrEqual(2);
    expect(sample(m, 'gatehouse_active_sessions')).toBeGreaterThanOrEqual(1);
    expect(sample(m, 'gatehouse_users')).toBeGreaterThanOrEqual(1);
    expect(sample(m, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(m, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('when a second factor is pending, then the login counts as pending_second_factor', async () => {
    const user = await makeUser(t, { two_factor: true } as never);
    const before = sample((await t.request('GET', '/metrics')).text, 'gatehouse_logins_total', { outcome: 'pending_second_factor' }) ?? 0;
    // A two-factor provider must answer, or the login fails closed (503).
    const off = t.app.hooks.on('auth.two_factor.methods', (p) => void (p.methods as unknown[]).push({ id: 'm1', method: 'email', status: 'active' }));
    const r = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
    off();
    expect(r.status).toBe(200);
    const after = sample((await t.request('GET', '/metrics')).text, 'gatehouse_logins_total', { outcome: 'pending_second_factor' });
    expect(after).toBe(before + 1);
  });

  it('when a job runs and when one fails, then job runs are counted by result', async () => {
    const scheduler = startScheduler(t.app, []);
    try {
      const tick = new Date(Date.UTC(2030, 0, 1, 0, 0));
      await scheduler.runNow({ name: 'metrics-ok', schedule: '0 0 1 1 *', run: async () => 'done' }, tick);
      await scheduler.runNow({ name: 'metrics-bad', schedule: '0 0 1 1 *', run: async () => Promise.reject(new Error('boom')) }, tick);
    } finally {
      await scheduler.stop();
    }
    const m = (await t.request('GET', '/metrics')).text;
    expect(sample(m, 'gatehouse_job_runs_total', { job: 'metrics-ok', result: 'ok' })).toBe(1);
    expect(sample(m, 'gatehouse_job_runs_total', { job: 'metrics-bad', result: 'failed' })).toBe(1);
  });

  it('when the request came through a proxy, then only METRICS_TOKEN opens it, compared exactly', async () => {
    const proxied = { 'X-Forwarded-For': '203.0.113.7' };
    const refused = await t.request('GET', '/metrics', { headers: proxied });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect(refused.text).not.toContain('gatehouse_');
    expect((await t.request('GET', '/metrics', { headers: { ...proxied, Authorization: `Bearer ${METRICS_TOKEN}x` } })).status).toBe(403);
    expect((await t.request('GET', '/metrics', { headers: { ...proxied, Authorization: 'Bearer ' } })).status).toBe(403);
    const ok = await t.request('GET', '/metrics', { headers: { ...proxied, Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('gatehouse_http_requests_total');
  });

  it('when sessions are validated, then the session gauge follows the database', async () => {
    const { token } = await makeSession(t);
    const before = sample((await t.request('GET', '/metrics')).text, 'gatehouse_active_sessions')!;
    await t.request('POST', '/auth/logout', { session: token });
    const after = sample((await t.request('GET', '/metrics')).text, 'gatehouse_active_sessions')!;
    expect(after).toBe(before - 1);
  });
});

describe('/metrics and rate limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_LOGIN: '2/1m' } });
  });
  afterAll(async () => t?.close());

  it('when logins are refused with 429, then they count as limited, by class, under their route template', async () => {
    const body = { email: 'nobody@example.test', password: 'Wrong-Password-1' };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request('POST', '/auth/login', { body })).status);
    expect(statuses).toEqual([401, 401, 429]);
    const m = (await t.request('GET', '/metrics')).text;
    expect(sample(m, 'gatehouse_http_requests_total', { method: 'POST', route: '/auth/login', status: '429' })).toBe(1);
    expect(sample(m, 'gatehouse_logins_total', { outcome: 'limited' })).toBe(1);
    expect(sample(m, 'gatehouse_logins_total', { outcome: 'failure' })).toBe(2);
    expect(sample(m, 'gatehouse_rate_limited_total', { class: 'login' })).toBe(1);
  });
});

describe('/metrics with METRICS_PORT', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_PORT: '65000' } });
  });
  afterAll(async () => t?.close());

  it('when METRICS_PORT is set, then the API port does not answer /metrics', async () => {
    const r = await t.request('GET', '/metrics');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ success: false, error: 'Not found', code: 'NOT_FOUND' });
  });
});
