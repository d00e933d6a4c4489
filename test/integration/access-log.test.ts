import net from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp } from '../../src/http/create-app.js';
import { withFastLane, type FastLaneStats } from '../../src/http/fast-lane/fast-lane.js';
import { accessLog } from '../../src/http/middleware/access-log.js';
import { errorHandler } from '../../src/http/middleware/errors.js';
import { requestId } from '../../src/http/middleware/request-id.js';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log/logger.js';
import { makeSession } from '../helpers/factories.js';
import { captureLog, startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * The access log (src/http/middleware/access-log.ts): at LOG_LEVEL info a line for each answer that
 * is not 2xx, each slow one (ACCESS_LOG_SLOW_MS) and each request whose client left first; at debug
 * a line for every answer. The app and the fast lane in front of it write the same lines.
 */

const SLOW_MS = 300;

let t: TestApp;
const started: RunningServer[] = [];
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  for (const s of started) await s.close(0);
  await t?.close();
});

interface Line {
  level: number;
  msg: string;
  req: { id: string; method: string; url: string; remoteAddress: string };
  res: { statusCode: number };
  responseTime: number;
}

type Log = ReturnType<typeof captureLog>;

const linesOf = (log: Log): Line[] =>
  log
    .text()
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line)
    .filter((e) => e.res !== undefined);

/** The real app with the lane in front, logging JSON at `level` into a log of its own. */
async function serve(level: string): Promise<{ server: RunningServer; log: Log; stats: FastLaneStats }> {
  const log = captureLog();
  const ctx = { ...t.app, config: { ...t.app.config, accessLogSlowMs: SLOW_MS }, logger: createLogger(level, log.stream, 'json') } as AppContext;
  const stats: FastLaneStats = { answered: 0, handedOff: 0 };
  const server = await startHttpServer(withFastLane(ctx, createApp(ctx), stats), { port: 0, host: '127.0.0.1' });
  started.push(server);
  return { server, log, stats };
}

/** A request whose body arrives `delayMs` after its head, over a raw socket; resolves with the status. */
function slowPost(port: number, path: string, headers: Record<string, string>, body: string, delayMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const head = [
      `POST ${path} HTTP/1.1`,
      'Host: 127.0.0.1',
      'Connection: close',
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
    ];
    for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    setTimeout(() => socket.write(body), delayMs);
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe('the access log', () => {
  it('when answers are sent at LOG_LEVEL info, then the 4xx have a line at info and the fast 2xx (lane or app) none', async () => {
    const { server, log, stats } = await serve('info');
    const { token } = await makeSession(t);
    const get = (p: string, headers: Record<string, string> = {}) => fetch(`${server.url}${p}`, { headers });
    expect((await get('/health')).status).toBe(200);
    expect((await get('/auth/validation', { 'X-Session-ID': token })).status).toBe(200);
    expect((await get('/auth/validation', { 'X-Session-ID': token })).status).toBe(200);
    expect((await get('/auth/me', { 'X-Session-ID': token })).status).toBe(200);
    expect(stats.answered).toBeGreaterThan(0);
    const refused = await get('/auth/validation', { 'X-Session-ID': 'ses_not_a_real_session_token_0000' });
    expect(refused.status).toBe(401);
    const missing = await get('/nope?session_id=ses_secretsecretsecret0001');
    expect(missing.status).toBe(404);
    await expect.poll(() => linesOf(log).some((l) => l.res.statusCode === 404)).toBe(true);
    // A 200 has a line only when it was slow (the first, cold validation may be, on a loaded machine).
    const lines = linesOf(log);
    expect(lines.filter((l) => l.res.statusCode === 200 && l.responseTime < SLOW_MS)).toEqual([]);
    const [a, b] = lines.filter((l) => l.res.statusCode !== 200);
    expect(lines.filter((l) => l.res.statusCode !== 200)).toHaveLength(2);
    expect(a).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: refused.headers.get('x-request-id'), method: 'GET', url: '/auth/validation', remoteAddress: '127.0.0.1' },
      res: { statusCode: 401 },
    });
    expect(typeof a.responseTime).toBe('number');
    expect(b).toMatchObject({ level: 30, req: { id: missing.headers.get('x-request-id'), url: '/nope?session_id=[redacted]' }, res: { statusCode: 404 } });
    expect(log.text()).not.toContain('secretsecret');
  });

  it(`when an answer takes ${SLOW_MS} ms or more, then it has a line at info, through the lane as through the app`, async () => {
    const { server, log, stats } = await serve('info');
    const { token } = await makeSession(t);
    await t.app.services.sessions.validate(token);
    const headers = { 'X-Session-ID': token };
    // The lane reads the body itself and answers; a query string sends the same request to the app.
    expect(await slowPost(server.port, '/auth/validation', headers, '{}', SLOW_MS + 100)).toBe(200);
    expect(stats.answered).toBe(1);
    expect(await slowPost(server.port, '/auth/validation?via=app', headers, '{}', SLOW_MS + 100)).toBe(200);
    expect(stats.answered).toBe(1);
    await expect.poll(() => linesOf(log).length).toBe(2);
    for (const [line, url] of linesOf(log).map((l, i) => [l, ['/auth/validation', '/auth/validation?via=app'][i]] as const)) {
      expect(line).toMatchObject({ level: 30, msg: 'request completed', req: { method: 'POST', url }, res: { statusCode: 200 } });
      expect(line.responseTime).toBeGreaterThanOrEqual(SLOW_MS);
    }
  });

  it('when the client leaves before its answer, then a line at info says the request was aborted', async () => {
    const { server, log } = await serve('info');
    const socket = net.connect(server.port, '127.0.0.1');
    socket.write('POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"email":');
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    await expect.poll(() => linesOf(log).length).toBe(1);
    expect(linesOf(log)[0]).toMatchObject({ level: 30, msg: 'request aborted', req: { method: 'POST', url: '/auth/login' } });
  });

  it('when LOG_LEVEL is debug, then every answer has a line, the fast 2xx at debug, the lane’s as the app’s', async () => {
    const { server, log, stats } = await serve('debug');
    const { token } = await makeSession(t);
    await t.app.services.sessions.validate(token);
    const lane = await fetch(`${server.url}/auth/validation`, { headers: { 'X-Session-ID': token } });
    const app = await fetch(`${server.url}/auth/validation?via=app`, { headers: { 'X-Session-ID': token } });
    expect([lane.status, app.status]).toEqual([200, 200]);
    expect(stats.answered).toBe(1);
    await expect.poll(() => linesOf(log).length).toBe(2);
    const [l, a] = linesOf(log);
    expect(l).toMatchObject({
      level: 20,
      msg: 'request completed',
      req: { id: lane.headers.get('x-request-id'), url: '/auth/validation' },
      res: { statusCode: 200 },
    });
    expect(a).toMatchObject({
      level: 20,
      msg: 'request completed',
      req: { id: app.headers.get('x-request-id'), url: '/auth/validation?via=app' },
      res: { statusCode: 200 },
    });
    expect(Object.keys(l)).toEqual(Object.keys(a));
  });

  it('when an answer is a 500, then its line is an error; a 503 (an answered outage) is a debug line', async () => {
    const run = async (level: string) => {
      const log = captureLog();
      const logger = createLogger(level, log.stream, 'json');
      const x = express();
      x.use(requestId, accessLog(logger, SLOW_MS)!);
      x.get('/boom', () => {
        throw new Error('boom');
      });
      x.get('/outage', (_req, res) => {
        res.status(503).json({ success: false });
      });
      x.use(errorHandler(logger));
      const server = await startHttpServer(x, { port: 0, host: '127.0.0.1' });
      started.push(server);
      expect((await fetch(`${server.url}/outage`)).status).toBe(503);
      expect((await fetch(`${server.url}/boom`)).status).toBe(500);
      await expect.poll(() => linesOf(log).some((l) => l.res.statusCode === 500)).toBe(true);
      return linesOf(log).map((l) => [l.level, l.msg, l.res.statusCode]);
    };
    expect(await run('info')).toEqual([[50, 'request errored', 500]]);
    expect(await run('debug')).toEqual([
      [20, 'request errored', 503],
      [50, 'request errored', 500],
    ]);
    // Above info no line at all: the middleware is not even mounted.
    expect(accessLog(createLogger('warn', captureLog().stream, 'json'), SLOW_MS)).toBeNull();
  });
});
