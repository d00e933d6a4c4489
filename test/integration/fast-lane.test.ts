import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp } from '../../src/http/create-app.js';
import { fastLaneEnabled, withFastLane, type FastLaneStats } from '../../src/http/fast-lane/fast-lane.js';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { createMemoryRateLimiter } from '../../src/limits/memory-limiter.js';
import { createLogger } from '../../src/log/logger.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, TEST_BRIDGE_SECRET, type TestApp } from '../helpers/test-app.js';

/*
 * What the differential test (fast-lane-differential.test.ts) does not see on the wire: the lane's
 * metrics, its refusals' count, a limiter that is down, and when the lane is off.
 */

let t: TestApp;
const started: RunningServer[] = [];
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  for (const s of started) await s.close(0);
  await t?.close();
});

async function pair(ctx: AppContext): Promise<{ lane: RunningServer; plain: RunningServer; stats: FastLaneStats }> {
  const stats: FastLaneStats = { answered: 0, handedOff: 0 };
  const opts = { port: 0, host: '127.0.0.1' };
  const lane = await startHttpServer(withFastLane(ctx, createApp(ctx), stats), opts);
  const plain = await startHttpServer(createApp(ctx), opts);
  started.push(lane, plain);
  return { lane, plain, stats };
}

/** The value of one series of a metric (labels matched as a subset), 0 when it has none yet. */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await t.app.metrics.scrape();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

const validate = (s: RunningServer, token: string) => fetch(`${s.url}/auth/validation`, { headers: { 'X-Session-ID': token } });
const bridge = (s: RunningServer, token: string) =>
  fetch(`${s.url}/auth/bridge/validate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Bridge-Secret': TEST_BRIDGE_SECRET },
    body: JSON.stringify({ session_id: token }),
  });

/** A POST written by hand (the headers exactly as given, no Content-Length unless given, the body as given); the whole answer as text. */
function rawPost(s: RunningServer, path: string, head: string[], body = ''): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(s.url).port), '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('end', () => resolve({ status: Number(text.slice(9, 12)), text }));
    socket.write([`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...head, '', body].join('\r\n'));
  });
}

/** An answer with what differs between two requests taken out: the date, the answer's timestamp, the budget left (one budget: each counts). */
const sameAnswer = (text: string) =>
  text
    .replace(/^Date: .*$/m, 'Date: -')
    .replace(/^X-RateLimit-Remaining: \d+$/m, 'X-RateLimit-Remaining: -')
    .replace(/"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/, '"timestamp":"-"');

/** A GET's answer as compared between the two servers: without the date and the budget left (one budget: each answer counts). */
async function getAnswer(s: RunningServer, path: string, headers: Record<string, string>) {
  const r = await fetch(`${s.url}${path}`, { headers });
  return { status: r.status, headers: [...r.headers].filter(([k]) => k !== 'date' && k !== 'x-ratelimit-remaining'), body: await r.text() };
}

describe('the fast lane', () => {
  it('when warm validations go through the lane, then requests, durations and cache lookups are counted as the app counts them', async () => {
    const { lane, plain, stats } = await pair(t.app);
    const { token } = await makeSession(t);
    expect((await validate(plain, token)).status).toBe(200); // warms the cache
    const series = { method: 'GET', route: '/auth/validation', status: '200' };
    const before = {
      requests: await metric('gatehouse_http_requests_total', series),
      durations: await metric('gatehouse_http_request_duration_seconds_count', { method: 'GET', route: '/auth/validation' }),
      lookups: await metric('gatehouse_cache_lookups_total', { cache: 'session', result: 'local' }),
    };
    for (let i = 0; i < 5; i++) expect((await validate(lane, token)).status).toBe(200);
    expect(stats.answered).toBe(5);
    for (let i = 0; i < 5; i++) expect((await validate(plain, token)).status).toBe(200);
    expect(await metric('gatehouse_http_requests_total', series)).toBe(before.requests + 10);
    expect(await metric('gatehouse_http_request_duration_seconds_count', { method: 'GET', route: '/auth/validation' })).toBe(before.durations + 10);
    expect(await metric('gatehouse_cache_lookups_total', { cache: 'session', result: 'local' })).toBe(before.lookups + 10);

    const bridgeSeries = { method: 'POST', route: '/auth/bridge/validate', status: '200' };
    const bridgeBefore = await metric('gatehouse_http_requests_total', bridgeSeries);
    expect((await bridge(lane, token)).status).toBe(200);
    expect(stats.answered).toBe(6);
    expect(await metric('gatehouse_http_requests_total', bridgeSeries)).toBe(bridgeBefore + 1);
  });

  it('when the lane refuses over a spent budget, then the refusal is counted in its class as the gate counts it', async () => {
    const ctx = {
      ...t.app,
      config: { ...t.app.config, rateLimitsEnabled: true, rateLimitSession: { points: 2, durationSec: 60 } },
      limiter: createMemoryRateLimiter(),
    } as AppContext;
    const { lane, stats } = await pair(ctx);
    const { token } = await makeSession(t);
    await t.app.services.sessions.validate(token);
    const before = await metric('gatehouse_rate_limited_total', { class: 'session' });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await validate(lane, token)).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect(stats).toEqual({ answered: 4, handedOff: 0 });
    expect(await metric('gatehouse_rate_limited_total', { class: 'session' })).toBe(before + 2);
    expect(await metric('gatehouse_http_requests_total', { method: 'GET', route: '/auth/validation', status: '429' })).toBeGreaterThanOrEqual(2);
  });

  it('when the limiter is down, then the lane lets the request through with the full budget, as the app does', async () => {
    const down = { consume: () => Promise.reject(new Error('limiter down')), refund: () => Promise.reject(new Error('limiter down')) };
    const ctx = { ...t.app, config: { ...t.app.config, rateLimitsEnabled: true }, limiter: down } as unknown as AppContext;
    const { lane, plain, stats } = await pair(ctx);
    const { token } = await makeSession(t);
    await t.app.services.sessions.validate(token);
    for (const s of [lane, plain]) {
      const r = await validate(s, token);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-remaining')).toBe(r.headers.get('x-ratelimit-limit'));
    }
    expect(stats.answered).toBe(1);
  });

  it('when a bridge or validation POST has no body at all, then the lane answers it with the bytes of the app (Content-Length: 0 with a type goes to the app)', async () => {
    const { lane, plain, stats } = await pair(t.app);
    const { token } = await makeSession(t);
    expect((await validate(plain, token)).status).toBe(200); // warms the cache
    const bridgeHead = [`X-Bridge-Secret: ${TEST_BRIDGE_SECRET}`, `X-Session-ID: ${token}`, 'X-Request-ID: req-no-body-1'];
    const sent: [string, string[]][] = [
      ['/auth/bridge/validate', bridgeHead],
      ['/auth/bridge/validate', [...bridgeHead, 'Content-Type: text/plain']],
      ['/auth/validation', [`X-Session-ID: ${token}`, 'X-Request-ID: req-no-body-2']],
    ];
    for (const [path, head] of sent) {
      const before = stats.answered;
      const [a, b] = [await rawPost(lane, path, head), await rawPost(plain, path, head)];
      expect(a.status, path).toBe(200);
      expect(stats.answered, path).toBe(before + 1);
      expect(sameAnswer(a.text)).toBe(sameAnswer(b.text));
    }
    // Content-Length: 0 is no body either, unless it names a type (express.json refuses a latin1 charset even then).
    const empty = await rawPost(lane, '/auth/bridge/validate', [...bridgeHead, 'Content-Length: 0']);
    expect(sameAnswer(empty.text)).toBe(sameAnswer((await rawPost(plain, '/auth/bridge/validate', [...bridgeHead, 'Content-Length: 0'])).text));
    const latin1 = [...bridgeHead, 'Content-Length: 0', 'Content-Type: application/json; charset=latin1'];
    const before = { ...stats };
    const refused = await rawPost(lane, '/auth/bridge/validate', latin1);
    expect(refused.status).toBe(415);
    expect(sameAnswer(refused.text)).toBe(sameAnswer((await rawPost(plain, '/auth/bridge/validate', latin1)).text));
    expect(stats).toEqual({ answered: before.answered, handedOff: before.handedOff + 1 });
  });

  it('when a bridge call names its session in ?session_id= (as flowfull-node sends it), then the lane answers with the bytes of the app; any other query goes to the app', async () => {
    const { lane, plain, stats } = await pair(t.app);
    const { token } = await makeSession(t);
    expect((await validate(plain, token)).status).toBe(200); // warms the cache
    const head = [`X-Bridge-Secret: ${TEST_BRIDGE_SECRET}`, 'Content-Type: application/json', 'X-Request-ID: req-query-1'];
    const post = (s: RunningServer, query: string, body = '{"source":"bridge-payments"}') =>
      rawPost(s, `/auth/bridge/validate?${query}`, [...head, `Content-Length: ${body.length}`], body);
    for (const [query, answered] of [
      [`session_id=${token}`, 1],
      [`session_id=${token}&source=bridge`, 0],
      [`session_id=${token.replace(/_/g, '%5F')}`, 0],
      [`session_id=${token}+`, 0],
    ] as const) {
      const before = stats.answered;
      const [a, b] = [await post(lane, query), await post(plain, query)];
      expect(stats.answered - before, query).toBe(answered);
      expect(sameAnswer(a.text), query).toBe(sameAnswer(b.text));
      // `+` is a space to the query parser: the bridge reads the token as sent, so it does not validate.
      expect(a.status, query).toBe(query.endsWith('+') ? 401 : 200);
    }
    // The query's session wins over the body's on the bridge.
    const other = await makeSession(t);
    const both = await post(lane, `session_id=${token}`, JSON.stringify({ session_id: other.token }));
    expect(both.text).toContain(`"id":"${(await t.app.services.sessions.validate(token)).session.id}"`);
  });

  it("when validations come through Gatehouse's nginx site (X-Real-IP, X-Forwarded-*), then the lane answers them with the bytes of the app", async () => {
    const ctx = { ...t.app, config: { ...t.app.config, trustProxy: 1 } } as AppContext;
    const { lane, plain, stats } = await pair(ctx);
    const { token } = await makeSession(t);
    expect((await validate(plain, token)).status).toBe(200); // warms the cache
    const proxied = {
      'X-Session-ID': token,
      'X-Request-ID': 'req-nginx-1',
      'X-Real-IP': '198.51.100.7',
      'X-Forwarded-For': '198.51.100.7',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'auth.example.test',
    };
    const before = stats.answered;
    const [a, b] = [await getAnswer(lane, '/auth/validation', proxied), await getAnswer(plain, '/auth/validation', proxied)];
    expect(stats.answered).toBe(before + 1);
    expect(a.status).toBe(200);
    expect(a).toEqual(b);
  });

  it('when the current user is read (GET /auth/me, GET /auth/user/me with the bridge secret), then the lane answers with the bytes of the app and counts the route as the app does', async () => {
    const { lane, plain, stats } = await pair(t.app);
    const { token } = await makeSession(t);
    expect((await validate(plain, token)).status).toBe(200); // warms the cache
    const read = (s: RunningServer, path: string, headers: Record<string, string>) => getAnswer(s, path, { ...headers, 'X-Request-ID': 'req-me-1' });
    for (const [path, headers] of [
      ['/auth/me', { 'X-Session-ID': token }],
      ['/auth/me', { Cookie: `session_id=${token}` }],
      ['/auth/user/me', { 'X-Session-ID': token, 'X-Bridge-Secret': TEST_BRIDGE_SECRET }],
      ['/auth/user/me?session_id=' + token, { 'X-Bridge-Secret': TEST_BRIDGE_SECRET }],
    ] as const) {
      const series = { method: 'GET', route: path.split('?')[0], status: '200' };
      const counted = await metric('gatehouse_http_requests_total', series);
      const before = stats.answered;
      const [a, b] = [await read(lane, path, headers), await read(plain, path, headers)];
      expect(stats.answered, path).toBe(before + 1);
      expect(a.status, path).toBe(200);
      expect(a, path).toEqual(b);
      expect(await metric('gatehouse_http_requests_total', series)).toBe(counted + 2);
    }
    // Without the bridge secret /auth/user/me is the app's 401.
    const before = stats.answered;
    expect((await read(lane, '/auth/user/me', { 'X-Session-ID': token })).status).toBe(401);
    expect(stats.answered).toBe(before);
  });

  it('when FAST_LANE is false, then the listener is the app itself; at LOG_LEVEL info (the default) the lane is on', async () => {
    const handler = createApp(t.app);
    expect(fastLaneEnabled(t.app)).toBe(true);
    expect(withFastLane(t.app, handler)).not.toBe(handler);
    const off = { ...t.app, config: { ...t.app.config, fastLane: false } } as AppContext;
    expect(withFastLane(off, handler)).toBe(handler);
    const logging = { ...t.app, logger: createLogger('info') } as AppContext;
    expect(fastLaneEnabled(logging)).toBe(true);
    expect(withFastLane(logging, handler)).not.toBe(handler);
  });
});
