import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, stopStartedClis } from '../helpers/cli.js';
import { BACKENDS, installBackend, login, request, serve, Tally, type FaultBackend } from './fault-harness.js';

afterEach(stopStartedClis);
afterAll(removeTempDirs);

/** SHUTDOWN_TIMEOUT for these servers: the process must be gone this many seconds plus 5 after SIGTERM. */
const SHUTDOWN_TIMEOUT_SEC = 3;
const DEADLINE_MS = (SHUTDOWN_TIMEOUT_SEC + 5) * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Sends SIGTERM and resolves with how long the process took to exit, and its code. */
async function stopTimed(s: Awaited<ReturnType<typeof serve>>['s']): Promise<{ ms: number; code: number | null }> {
  const started = Date.now();
  s.child.kill('SIGTERM');
  const { code } = await Promise.race([s.exited, sleep(DEADLINE_MS + 10_000).then(() => ({ code: -1 }))]);
  return { ms: Date.now() - started, code };
}

interface Outcome {
  connected: boolean;
  answer: string;
  error: string | null;
}

/** A raw connection that writes `text` as soon as it connects and collects everything until it closes. */
function rawRequest(port: number, text: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const o: Outcome = { connected: false, answer: '', error: null };
    socket.on('connect', () => {
      o.connected = true;
      socket.write(text);
    });
    socket.on('data', (d) => (o.answer += d));
    socket.on('error', (e: NodeJS.ErrnoException) => (o.error = e.code ?? e.message));
    socket.setTimeout(60_000, () => socket.destroy(new Error('client timeout')));
    socket.on('close', () => resolve(o));
  });
}

const get = (path: string, session: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Session-ID: ${session}\r\n\r\n`;
const post = (path: string, body: unknown) => {
  const text = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
};

/** Every connection the server accepted got an HTTP answer; none was reset. Refused at the socket is allowed. */
function expectNoResets(outcomes: Outcome[]): Tally {
  const tally = new Tally();
  for (const o of outcomes) {
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(o.answer)?.[1];
    tally.add(status ? { status: Number(status), retryAfter: null, body: '' } : { status: 0, retryAfter: null, body: o.error ?? 'closed without an answer' });
  }
  const lost = outcomes.filter((o) => o.error !== 'ECONNREFUSED' && !/^HTTP\/1\.1 \d{3} /.test(o.answer));
  expect(
    lost.map((o) => o.error ?? 'closed without an answer'),
    JSON.stringify(tally),
  ).toEqual([]);
  for (const o of outcomes.filter((x) => /^HTTP\/1\.1 503 /.test(x.answer))) expect(o.answer).toMatch(/\r\nretry-after: \d+\r\n/i);
  return tally;
}

describe.each(BACKENDS)('SIGTERM on %s, every module installed', (kind) => {
  let b: FaultBackend;
  afterEach(async () => {
    await b?.databaseUp();
    await b?.drop();
  });

  const env = { SHUTDOWN_TIMEOUT: String(SHUTDOWN_TIMEOUT_SEC) };

  it(`when the database is down (requests hanging on it), then the process exits within SHUTDOWN_TIMEOUT + 5 s (${DEADLINE_MS / 1000} s)`, async () => {
    b = await installBackend(kind);
    const { s, url } = await serve(b, env);
    const session = await login(url);
    await b.databaseDown();
    const inFlight = [1, 2, 3].map(() => request(url, 'GET', '/auth/admin/users?limit=5', { session }));
    await sleep(500);
    const { ms, code } = await stopTimed(s);
    console.log(`[faults] ${kind}: SIGTERM with the database down: exit ${code} after ${ms} ms`);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(DEADLINE_MS);
    for (const a of await Promise.all(inFlight)) expect([200, 503]).toContain(a.status);
  });

  it.runIf(kind === 'pg')(`when Redis is down, then the process exits within ${DEADLINE_MS / 1000} s (it used to wait forever on the subscriber)`, async () => {
    b = await installBackend(kind);
    const { s, url } = await serve(b, env);
    await login(url);
    await b.redis!.kill();
    await sleep(1_500);
    const { ms, code } = await stopTimed(s);
    console.log(`[faults] pg: SIGTERM with Redis down: exit ${code} after ${ms} ms`);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(DEADLINE_MS);
  });

  it.runIf(kind === 'pg')(
    `when Redis and the database are both down, then the primary and every worker of --workers 2 exit within ${DEADLINE_MS / 1000} s`,
    async () => {
      b = await installBackend(kind);
      const { s, url } = await serve(b, { ...env, LOG_LEVEL: 'info' }, ['--workers', '2']);
      await login(url);
      const workers = await waitForWorkers(s, 2);
      await b.redis!.kill();
      await b.databaseDown();
      await sleep(1_500);
      const { ms, code } = await stopTimed(s);
      console.log(`[faults] pg: SIGTERM to --workers 2 with Redis and the database down: exit ${code} after ${ms} ms`);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(DEADLINE_MS);
      expect(workers.filter(alive)).toEqual([]);
    },
  );

  it('when 200 connections open in the 50 ms after SIGTERM, then each is answered or refused at the socket, none reset', async () => {
    b = await installBackend(kind);
    const { s, url } = await serve(b, { ...env, RATE_LIMITS_ENABLED: 'false' });
    const session = await login(url);
    const port = Number(new URL(url).port);
    s.child.kill('SIGTERM');
    const outcomes: Promise<Outcome>[] = [];
    for (let i = 0; i < 200; i++) {
      outcomes.push(rawRequest(port, get(i % 2 ? '/auth/validation' : '/auth/admin/users?limit=2', session)));
      if (i % 8 === 7) await sleep(2);
    }
    const tally = expectNoResets(await Promise.all(outcomes));
    console.log(`[faults] ${kind}: 200 connections after SIGTERM: ${JSON.stringify(tally)}`);
    expect((await s.exited).code).toBe(0);
  });

  it('when a backlog of 400 logins (bcrypt) outlasts the grace period at SIGTERM, then each gets its answer or 503 with Retry-After, none reset', async () => {
    b = await installBackend(kind);
    const { s, url } = await serve(b, { SHUTDOWN_TIMEOUT: '2', RATE_LIMITS_ENABLED: 'false', BCRYPT_ROUNDS: '10' });
    const port = Number(new URL(url).port);
    const outcomes = Array.from({ length: 400 }, (_, i) =>
      rawRequest(port, post('/auth/login', { email: `nobody${i}@example.com`, password: 'not the password' })),
    );
    await sleep(300);
    const started = Date.now();
    s.child.kill('SIGTERM');
    const tally = expectNoResets(await Promise.all(outcomes));
    const { code } = await s.exited;
    console.log(`[faults] ${kind}: 400 logins across SIGTERM: ${JSON.stringify(tally)}; exit after ${Date.now() - started} ms`);
    expect(code).toBe(0);
    expect(tally.counts.get('401') ?? 0).toBeGreaterThan(0);
    expect(tally.counts.get('503') ?? 0).toBeGreaterThan(0);
  });
});

async function waitForWorkers(s: Awaited<ReturnType<typeof serve>>['s'], n: number): Promise<number[]> {
  const pids = () => [...new Set([...(s.stdout + s.stderr).matchAll(/worker (\d+) listening/g)].map((m) => Number(m[1])))];
  await expect
    .poll(() => pids().length, { timeout: 10_000, interval: 100 })
    .toBeGreaterThanOrEqual(n)
    .catch((err: Error) => {
      throw new Error(`workers did not announce themselves: ${err.message}\n${s.stdout}\n${s.stderr}`);
    });
  return pids();
}
