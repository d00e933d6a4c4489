import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { createLimitClassTable } from '../../src/limits/limit-classes.js';
import { REFUSAL_MESSAGE } from '../../src/log/refusal-log.js';
import { makeSession } from '../helpers/factories.js';
import { captureLog, startTestApp, type TestApp, type TestResponse } from '../helpers/test-app.js';

/*
 * Refusals in the log (docs/rate-limits.md, "Refusals in the log"; issue 52): a rate-limit refusal
 * writes no access line of its own; each minute gives one line per client address and limit class
 * with the count, when the minute closes (here: the app's clock moved on, then the next refusal), and
 * on shutdown. /metrics still counts every refusal.
 */

const MINUTE = 60_000;
/** The app's clock: a few seconds into the current minute, moved on by the test. */
let now = Math.floor(Date.now() / MINUTE) * MINUTE + 5_000;
const firstMinute = new Date(now - (now % MINUTE)).toISOString();

const log = captureLog();
let t: TestApp;
let closed = false;

beforeAll(async () => {
  t = await startTestApp({
    logTo: log.stream,
    clock: () => new Date(now),
    env: {
      LOG_LEVEL: 'info',
      // Behind one proxy: X-Forwarded-For names the client, so one test process is several addresses.
      TRUST_PROXY: '1',
      RATE_LIMIT_DEFAULT: '5/1h',
      RATE_LIMIT_BRIDGE_INVALID: '3/1h',
      RATE_LIMIT_SESSION: '4/1h',
    },
  });
});
afterAll(async () => {
  if (!closed) await t?.close();
});

interface Entry {
  msg: string;
  level: number;
  req?: { url: string; remoteAddress: string };
  res?: { statusCode: number };
  remoteAddress?: string;
  limitClass?: string;
  count?: number;
  minute?: string;
}

const entries = (): Entry[] =>
  log
    .text()
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Entry);
const accessLines = () => entries().filter((e) => e.res !== undefined);
const refusalLines = () => entries().filter((e) => e.msg === REFUSAL_MESSAGE);

const from = (address: string) => ({ 'X-Forwarded-For': address });

/** The value of one series in Prometheus text, or 0. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** A 429 as every refusal must be: Retry-After, the rate-limit headers and the JSON error, whatever the log does. */
function expectRefusal(r: TestResponse): void {
  expect(r.status).toBe(429);
  const retry = Number(r.headers.get('retry-after'));
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(r.body).toEqual({ success: false, error: 'Too many requests', code: 'RATE_LIMITED', retry_after: retry });
  expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
}

describe('refusals in the log', () => {
  const A = '198.51.100.7';
  const B = '198.51.100.8';
  const C = '198.51.100.9';
  let metricsBefore = '';
  const counts = { aDefault: 0, aBridgeInvalid: 0, bDefault: 0, cSession: 0 };

  it('when one address floods a route past its budget, then each refusal is a full 429 and none has an access line, while the accepted ones keep theirs', async () => {
    metricsBefore = (await t.request('GET', '/metrics')).text;
    // GET /auth/validation with a dead session: default, per address (5 per hour here); accepted ones answer 401.
    const rs: TestResponse[] = [];
    for (let i = 0; i < 25; i++) rs.push(await t.request('GET', '/auth/validation', { session: 'ses_not_a_live_one', headers: from(A) }));
    expect(rs.slice(0, 5).map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    for (const r of rs.slice(5)) expectRefusal(r);
    counts.aDefault = 20;

    await expect.poll(() => accessLines().filter((l) => l.req?.url === '/auth/validation').length).toBe(5);
    const lines = accessLines();
    expect(lines.filter((l) => l.res?.statusCode === 429)).toEqual([]);
    expect(lines.filter((l) => l.req?.url === '/auth/validation').map((l) => [l.msg, l.res?.statusCode])).toEqual(
      Array.from({ length: 5 }, () => ['request completed', 401]),
    );
    // Nothing of the minute yet: it has not closed.
    expect(refusalLines()).toEqual([]);
  });

  it('when the same address is refused in a second class, another address in the first, and a session in the fast lane, then still no access line for any refusal', async () => {
    // A wrong bridge secret: bridge-invalid, per address (3 per hour here).
    const wrong = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.request('POST', '/auth/bridge/validate', { headers: { ...from(A), 'X-Bridge-Secret': 'guess-guess-guess-guess' }, body: {} }),
      ),
    );
    expect(wrong.filter((r) => r.status === 401)).toHaveLength(3);
    for (const r of wrong.filter((r) => r.status !== 401)) expectRefusal(r);
    counts.aBridgeInvalid = 7;

    const other = [];
    for (let i = 0; i < 8; i++) other.push(await t.request('GET', '/no/such/path', { headers: from(B) }));
    expect(other.filter((r) => r.status === 404)).toHaveLength(5);
    for (const r of other.slice(5)) expectRefusal(r);
    counts.bDefault = 3;

    // A live session past `session` (4 per hour here): warm, so the fast lane answers and refuses it itself.
    const { token } = await makeSession(t);
    await t.app.services.sessions.validate(token);
    const mine = [];
    for (let i = 0; i < 10; i++) mine.push(await t.request('GET', '/auth/validation', { session: token, headers: from(C) }));
    expect(mine.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    for (const r of mine.slice(4)) expectRefusal(r);
    counts.cSession = 6;

    await expect.poll(() => accessLines().filter((l) => l.req?.url === '/no/such/path').length).toBe(5);
    expect(accessLines().filter((l) => l.res?.statusCode === 429)).toEqual([]);
    expect(accessLines().filter((l) => l.req?.url === '/auth/bridge/validate' && l.res?.statusCode === 401)).toHaveLength(3);
    expect(refusalLines()).toEqual([]);
  });

  it('when /metrics is read, then it has counted every refusal, by class', async () => {
    const m = (await t.request('GET', '/metrics')).text;
    const grew = (cls: string) =>
      sample(m, 'gatehouse_rate_limited_total', { class: cls }) - sample(metricsBefore, 'gatehouse_rate_limited_total', { class: cls });
    expect(grew('default')).toBe(counts.aDefault + counts.bDefault);
    expect(grew('bridge-invalid')).toBe(counts.aBridgeInvalid);
    expect(grew('session')).toBe(counts.cSession);
  });

  it('when the minute closes and a refusal of the next one comes, then the closed minute has one line per address and class, with its count', async () => {
    now += MINUTE;
    expectRefusal(await t.request('GET', '/auth/validation', { session: 'ses_not_a_live_one', headers: from(A) }));
    await expect.poll(() => refusalLines().length).toBe(4);
    const lines = refusalLines();
    expect(lines.every((l) => l.level === 30 && l.minute === firstMinute)).toBe(true);
    const byPair = lines.map((l) => [l.remoteAddress, l.limitClass, l.count]).sort();
    expect(byPair).toEqual(
      [
        [A, 'bridge-invalid', counts.aBridgeInvalid],
        [A, 'default', counts.aDefault],
        [B, 'default', counts.bDefault],
        [C, 'session', counts.cSession],
      ].sort(),
    );
    expect(accessLines().filter((l) => l.res?.statusCode === 429)).toEqual([]);
  });

  it('when the app stops, then the refusals of the minute still open are written', async () => {
    const logged = refusalLines().length;
    closed = true;
    await t.close();
    const last = refusalLines().slice(logged);
    expect(last.map((l) => [l.remoteAddress, l.limitClass, l.count, l.minute])).toEqual([[A, 'default', 1, new Date(now - (now % MINUTE)).toISOString()]]);
  });
});

describe('the bridge budget', () => {
  it('when RATE_LIMIT_BRIDGE is not set, then one secret may validate 10,000,000 times in 5 minutes (what one instance answers)', () => {
    const config = loadConfig({ env: {}, skipFile: true });
    expect(config.rateLimitBridge).toEqual({ points: 10_000_000, durationSec: 300 });
    expect(createLimitClassTable(config, []).get('bridge').rule).toEqual({ points: 10_000_000, durationSec: 300 });
  });
});
