import net from 'node:net';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp } from '../../src/http/create-app.js';
import { withFastLane, type FastLaneStats } from '../../src/http/fast-lane/fast-lane.js';
import { startHttpServer, type RunningServer } from '../../src/http/server.js';
import { createMemoryRateLimiter } from '../../src/limits/memory-limiter.js';
import { createLogger } from '../../src/log/logger.js';
import { createRefusalLog, REFUSAL_MESSAGE } from '../../src/log/refusal-log.js';
import { BACKEND } from '../helpers/backend.js';
import { makeSession, makeUser } from '../helpers/factories.js';
import { startTestApp, TEST_BRIDGE_SECRET, type TestApp } from '../helpers/test-app.js';

/*
 * The fast lane (src/http/fast-lane) must answer exactly as the Express app does. Generated requests
 * (fast-check) go, one after the other, to two servers over the same app state (one store, one
 * session cache): one with the lane in front of the app, one with the app alone. Each server counts
 * rate limits in a limiter of its own (in memory, on one clock the test moves), so both budgets see
 * the same sequence of hits. Status line, every header in its order and spelling, and the body bytes
 * must be the same; only the Date header, a generated X-Request-ID and the bridge answer's
 * `timestamp` (the time of the answer) are normalised. Each server logs at LOG_LEVEL info (the
 * default) into a log of its own, and the access lines each case wrote must be the same too (time
 * and responseTime aside): with ACCESS_LOG_SLOW_MS at its default only the non-2xx answers have one,
 * with 0 every answer is "slow" and has one, the lane's own 200s included.
 */

const ORIGIN = 'https://app.example.test';
const SESSION_BUDGET = 8;
/** The limiters' clock moves past every window this often (cases), so budgets fill and refill. */
const WINDOW_CASES = 200;
const CASES_LIMITS_OFF = 5_000;
const CASES_LIMITS_ON = 3_000;
/**
 * Each run's time limit. A run past it stops sending (a timed-out test's cases would otherwise go on
 * beside the next run's, moving the shared clock under them).
 */
const RUN_TIMEOUT_MS = 360_000;
/** Cases (limits off) with ACCESS_LOG_SLOW_MS=0: every answer writes its access line. */
const CASES_EVERY_LINE = 2_000;

let now = Date.now();
let limiterNow = Date.now();
let t: TestApp;
let other: TestApp;

interface Pools {
  valid: string[];
  pending: string[];
  revoked: string[];
  /** Valid sessions opened with a client context (IP 10.1.2.3, user agent "UA/1", device "dev-1"). */
  context: string[];
}
const pools: Pools = { valid: [], pending: [], revoked: [], context: [] };

beforeAll(async () => {
  t = await startTestApp({
    clock: () => new Date(now),
    env: {
      CORS_ORIGINS: `${ORIGIN},https://other.example.test/`,
      RATE_LIMIT_SESSION: `${SESSION_BUDGET}/1m`,
      RATE_LIMIT_BRIDGE: '60/1m',
      RATE_LIMIT_BRIDGE_INVALID: '6/1m',
      RATE_LIMIT_DEFAULT: '40/1m',
    },
  });
  other = await startTestApp({ sharing: t, clock: () => new Date(now) });
  for (let i = 0; i < 10; i++) pools.valid.push(await warm((await makeSession(t, { name: `Valid ${i} "quoted" ü` })).token));
  for (let i = 0; i < 3; i++) {
    const user = await makeUser(t);
    pools.pending.push((await t.app.services.sessions.create(user.id, { status: 'pending_2fa', ip: '127.0.0.1' })).token);
    const { token } = await makeSession(t);
    await t.app.services.sessions.revokeToken(token);
    pools.revoked.push(token);
    const ctxUser = await makeUser(t);
    pools.context.push(await warm((await t.app.services.sessions.create(ctxUser.id, { ip: '10.1.2.3', userAgent: 'UA/1', deviceId: 'dev-1' })).token));
  }
}, 60_000);

afterAll(async () => {
  await other?.close();
  await t?.close();
});

/**
 * Validates once, so the session sits in this instance's cache. The two servers share that cache, so
 * the first of a pair to meet a cold session would warm it for the second (whose bridge answer then
 * says `cached: true`): pooled sessions start warm and a pair sees one state.
 */
async function warm(token: string): Promise<string> {
  await t.app.services.sessions.validate(token);
  return token;
}

/** A log destination keeping its JSON lines (pino writes one line per call). */
class Log {
  readonly lines: string[] = [];
  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      for (const l of chunk.toString().split('\n')) if (l.trim()) this.lines.push(l);
      cb();
    },
  });
}

/**
 * A copy of the app context with its own limiter, the given limits switch and slow-answer threshold,
 * and a logger at info writing JSON into `log`, with a refusal log of its own on the limiter's clock
 * (the rest is shared).
 */
function variant(limitsOn: boolean, slowMs: number, log: Log): AppContext {
  const logger = createLogger('info', log.stream, 'json');
  return {
    ...t.app,
    // With limits on, behind one proxy: a forwarded address is whom a budget per address counts.
    config: { ...t.app.config, rateLimitsEnabled: limitsOn, accessLogSlowMs: slowMs, trustProxy: limitsOn ? 1 : false },
    limiter: createMemoryRateLimiter({ now: () => limiterNow }),
    logger,
    refusals: createRefusalLog(logger, { now: () => limiterNow }),
  } as AppContext;
}

interface Side {
  server: RunningServer;
  log: Log;
  slowMs: number;
  ctx: AppContext;
}

async function servers(limitsOn: boolean, slowMs: number, stats: FastLaneStats): Promise<{ lane: Side; plain: Side }> {
  const logs = [new Log(), new Log()];
  const a = variant(limitsOn, slowMs, logs[0]);
  const b = variant(limitsOn, slowMs, logs[1]);
  const opts = { port: 0, host: '127.0.0.1' };
  return {
    lane: { server: await startHttpServer(withFastLane(a, createApp(a), stats), opts), log: logs[0], slowMs, ctx: a },
    plain: { server: await startHttpServer(createApp(b), opts), log: logs[1], slowMs, ctx: b },
  };
}

// ---- the generated requests ----

type TokenKind = 'valid' | 'pending' | 'revoked' | 'context' | 'expired' | 'malformed' | 'overlong' | 'none' | 'padded';
const tokenKind = fc.constantFrom<TokenKind>(
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'context',
  'pending',
  'revoked',
  'expired',
  'malformed',
  'overlong',
  'none',
  'padded',
);

const arbCase = fc.record({
  target: fc.constantFrom(
    'GET /auth/validation',
    'GET /auth/validation',
    'GET /auth/validation',
    'POST /auth/validation',
    'POST /auth/validation',
    'POST /auth/bridge/validate',
    'POST /auth/bridge/validate',
    'POST /auth/bridge/validate',
    'HEAD /auth/validation',
    'OPTIONS /auth/validation',
    'OPTIONS /auth/bridge/validate',
    'GET /auth/validation/',
    'GET /Auth/Validation',
    'GET /auth/validation?x=1',
    'PUT /auth/validation',
    'GET /auth/bridge/validate',
    'GET /auth/me',
    'GET /auth/me',
    'GET /auth/user/me',
    'GET /auth/user/me',
    'HEAD /auth/user/me',
    'GET /auth/me/',
  ),
  token: tokenKind,
  second: fc.option(tokenKind, { freq: 4 }),
  where: fc.constantFrom('header', 'header', 'header', 'cookie', 'body', 'bodyCamel', 'query', 'query', 'headerAndBody', 'queryAndBody'),
  headerName: fc.constantFrom('X-Session-ID', 'x-session-id', 'X-SESSION-ID', 'x-Session-Id'),
  duplicateHeader: fc.nat(99).map((n) => n < 15),
  cookie: fc.constantFrom('plain', 'among', 'quoted', 'twice', 'wrongCase', 'encoded'),
  query: fc.constantFrom('plain', 'plain', 'plain', 'extra', 'twice', 'plus', 'encoded'),
  bridge: fc.constantFrom('none', 'right', 'right', 'right', 'wrong', 'empty', 'spaced'),
  bridgeName: fc.constantFrom('X-Bridge-Secret', 'x-bridge-secret', 'X-BRIDGE-SECRET'),
  requestId: fc.constantFrom('none', 'none', 'sane', 'short', 'bad', 'long'),
  origin: fc.constantFrom('none', 'none', 'allowed', 'allowedSlash', 'other', 'null'),
  contentType: fc.constantFrom(
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json;charset="utf-8"',
    'text/plain',
    'application/json; charset=latin1',
    'application/vnd.api+json',
    'none',
  ),
  body: fc.constantFrom('json', 'json', 'json', 'empty', 'zeroLength', 'malformed', 'array', 'deep', 'nul', 'extra', 'badType', 'bom', 'spaces'),
  bridgeContext: fc.constantFrom('none', 'none', 'ipMatch', 'ipOther', 'strictUaOther', 'strictMatch', 'modeBad', 'modeNone'),
  extraHeader: fc.constantFrom(
    'none',
    'none',
    'none',
    'none',
    'xff',
    'nginx',
    'nginx',
    'forwarded',
    'cdn',
    'trace',
    'browser',
    'browser',
    'ifNoneMatch',
    'acceptHtml',
    'cacheControl',
    'userAgent',
    'acceptLanguage',
  ),
  chunked: fc.nat(99).map((n) => n < 5),
  pick: fc.nat(1_000),
  revoke: fc.nat(999).map((n) => n < 6),
});
/** Cases as clients usually send them: what the lane answers itself, with its few variations. */
const arbTypical = arbCase.chain((c) =>
  fc
    .record({
      token: fc.constantFrom<TokenKind>('valid', 'valid', 'valid', 'context', 'padded', 'revoked'),
      where: fc.constantFrom('header', 'header', 'cookie', 'body', 'bodyCamel', 'query', 'headerAndBody'),
      bridge: fc.constantFrom('none', 'right', 'right'),
      origin: fc.constantFrom('none', 'none', 'allowed', 'other'),
      requestId: fc.constantFrom('none', 'none', 'sane'),
      contentType: fc.constantFrom('application/json', 'application/json; charset=utf-8'),
      target: fc.constantFrom('GET /auth/validation', 'POST /auth/validation', 'POST /auth/bridge/validate', 'GET /auth/me', 'GET /auth/user/me'),
    })
    .map((typical) => ({
      ...c,
      ...typical,
      second: null,
      duplicateHeader: false,
      body: 'json' as const,
      extraHeader: 'none' as const,
      chunked: false,
      bridgeContext: c.bridgeContext === 'ipMatch' || c.bridgeContext === 'strictMatch' ? c.bridgeContext : ('none' as const),
    })),
);
/** Half typical, half anything the generator can make. */
const arbAny = fc.oneof(arbTypical, arbCase);

type Case = typeof arbCase extends fc.Arbitrary<infer T> ? T : never;

/**
 * Twin expired sessions: answering one deletes it, so each server gets its own (their answers name no
 * session). Opened eight days ago (the session lifetime is seven), all in one transaction.
 */
async function expiredTwins(count: number): Promise<[string, string][]> {
  const owner = (await makeUser(t)).id;
  const at = now;
  now -= 8 * 24 * 3600_000;
  try {
    return await t.app.sequelize.transaction(async (tx) => {
      const out: [string, string][] = [];
      for (let i = 0; i < count; i++) {
        const a = await t.app.services.sessions.create(owner, {}, { tx });
        const b = await t.app.services.sessions.create(owner, {}, { tx });
        out.push([a.token, b.token]);
      }
      return out;
    });
  } finally {
    now = at;
  }
}

async function tokenFor(kind: TokenKind, pick: number, expired: [string, string] | null, side: 0 | 1): Promise<string | null> {
  switch (kind) {
    case 'valid':
      return pools.valid[pick % pools.valid.length];
    case 'context':
      return pools.context[pick % pools.context.length];
    case 'pending':
      return pools.pending[pick % pools.pending.length];
    case 'revoked':
      return pools.revoked[pick % pools.revoked.length];
    case 'expired':
      return expired![side];
    case 'malformed':
      return ['ses_short', 'not a token', 'ses_ü€', '""', 'ses_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '%zz', ';'][pick % 7];
    case 'overlong':
      return pick % 2 ? `ses_${'A'.repeat(400)}` : `${pools.valid[0]}${'x'.repeat(180)}`;
    case 'padded':
      return `  ${pools.valid[pick % pools.valid.length]}\t`;
    case 'none':
      return null;
  }
}

interface Wire {
  method: string;
  path: string;
  headers: [string, string][];
  body: Buffer | null;
  chunked: boolean;
}

function bodyFor(c: Case, token: string | null, second: string | null): Buffer | null {
  const fields: Record<string, unknown> = {};
  // With the token in the header or the query too, the body carries the second one (who wins differs by route).
  const both = c.where === 'headerAndBody' || c.where === 'queryAndBody';
  const tok = c.where === 'body' ? token : both ? second : c.where === 'bodyCamel' ? token : null;
  if (tok !== null && tok !== undefined) fields[c.where === 'bodyCamel' ? 'sessionId' : 'session_id'] = tok;
  if (c.bridgeContext === 'ipMatch') fields.ip = '10.1.2.3';
  if (c.bridgeContext === 'ipOther') fields.ip_address = '10.9.9.9';
  if (c.bridgeContext === 'strictUaOther') Object.assign(fields, { validation_mode: 'strict', user_agent: 'Other/2', ip: '10.1.2.3' });
  if (c.bridgeContext === 'strictMatch') Object.assign(fields, { validation_mode: 'STRICT', user_agent: 'UA/1', device_id: 'dev-1', ip: '10.1.2.3' });
  if (c.bridgeContext === 'modeBad') fields.validation_mode = 'paranoid';
  if (c.bridgeContext === 'modeNone') fields.validation_mode = 'none';
  switch (c.body) {
    case 'json':
      return Buffer.from(JSON.stringify(fields));
    case 'empty':
      return null;
    case 'zeroLength':
      return Buffer.alloc(0);
    case 'malformed':
      return Buffer.from(`{"session_id": "${token ?? ''}"`);
    case 'array':
      return Buffer.from('[1,2]');
    case 'deep':
      return Buffer.from(`${'['.repeat(70)}${']'.repeat(70)}`);
    case 'nul':
      return Buffer.from(JSON.stringify({ ...fields, user_agent: 'a\u0000b' }));
    case 'extra':
      return Buffer.from(JSON.stringify({ ...fields, extra: { nested: [1, 2, 3] } }));
    case 'badType':
      return Buffer.from(JSON.stringify({ ...fields, session_id: 12345 }));
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(fields))]);
    case 'spaces':
      return Buffer.from(`  \n${JSON.stringify(fields, null, 2)}\n`);
  }
}

/** The session in the query string: as flowfull-node sends it (the lane answers), or spelt so the app alone reads it. */
function queryFor(spelling: Case['query'], token: string): string {
  switch (spelling) {
    case 'plain':
      return `session_id=${encodeURIComponent(token)}`;
    case 'extra':
      return `session_id=${encodeURIComponent(token)}&source=bridge`;
    case 'twice':
      return `session_id=&session_id=${encodeURIComponent(token)}`;
    case 'plus':
      return `session_id=${encodeURIComponent(token)}+`;
    case 'encoded':
      return `session_id=${encodeURIComponent(token).replace(/_/g, '%5F')}`;
  }
}

function cookieFor(spelling: Case['cookie'], token: string): string {
  switch (spelling) {
    case 'plain':
      return `session_id=${token}`;
    case 'among':
      return `theme=dark; session_id=${token}; other=1`;
    case 'quoted':
      return `session_id="${token}"`;
    case 'twice':
      return `session_id=${token}; session_id=ses_someoneelse`;
    case 'wrongCase':
      return `Session_Id=${token}`;
    case 'encoded':
      return `session_id=${encodeURIComponent(token)}`;
  }
}

const needsTwins = (c: Case) => c.token === 'expired' || c.second === 'expired';

async function wireFor(c: Case, expired: [string, string] | null): Promise<[Wire, Wire]> {
  const sides = [0, 1] as const;
  const wires: Wire[] = [];
  for (const side of sides) {
    const token = await tokenFor(c.token, c.pick, expired, side);
    const second = c.second ? await tokenFor(c.second, c.pick >> 3, expired, side) : token;
    const [method, path0] = c.target.split(' ');
    let path = path0;
    const headers: [string, string][] = [];
    if (token !== null) {
      if (c.where === 'header' || c.where === 'headerAndBody') {
        headers.push([c.headerName, token]);
        if (c.duplicateHeader) headers.push([c.headerName, second ?? 'ses_dup']);
      } else if (c.where === 'cookie') headers.push(['Cookie', cookieFor(c.cookie, token)]);
      else if (c.where === 'query' || c.where === 'queryAndBody') path += `${path.includes('?') ? '&' : '?'}${queryFor(c.query, token)}`;
    }
    if (c.bridge === 'right') headers.push([c.bridgeName, TEST_BRIDGE_SECRET]);
    if (c.bridge === 'wrong') headers.push([c.bridgeName, `${TEST_BRIDGE_SECRET.slice(0, -1)}X`]);
    if (c.bridge === 'empty') headers.push([c.bridgeName, '']);
    if (c.bridge === 'spaced') headers.push([c.bridgeName, ` ${TEST_BRIDGE_SECRET} `]);
    if (c.requestId === 'sane') headers.push(['X-Request-ID', `req-${c.pick}-abcdef`]);
    if (c.requestId === 'short') headers.push(['x-request-id', 'abc']);
    if (c.requestId === 'bad') headers.push(['X-Request-Id', 'has spaces and ü']);
    if (c.requestId === 'long') headers.push(['X-Request-ID', 'r'.repeat(65)]);
    if (c.origin === 'allowed') headers.push(['Origin', ORIGIN]);
    if (c.origin === 'allowedSlash') headers.push(['Origin', 'https://other.example.test']);
    if (c.origin === 'other') headers.push(['Origin', 'https://evil.example.test']);
    if (c.origin === 'null') headers.push(['Origin', 'null']);
    if (method === 'OPTIONS' && c.pick % 2) headers.push(['Access-Control-Request-Method', 'POST']);
    const extra: Record<Exclude<Case['extraHeader'], 'none'>, [string, string][]> = {
      xff: [['X-Forwarded-For', '203.0.113.9']],
      // Gatehouse's own nginx site (templates/nginx/gatehouse.conf) sets these on every request.
      nginx: [
        ['X-Real-IP', '198.51.100.7'],
        ['X-Forwarded-For', '198.51.100.7'],
        ['X-Forwarded-Proto', 'https'],
        ['X-Forwarded-Host', 'auth.example.test'],
      ],
      forwarded: [['Forwarded', 'for=192.0.2.60;proto=https, for=198.51.100.17']],
      cdn: [
        ['CF-Connecting-IP', '203.0.113.50'],
        ['CF-Ray', '8f1c2d3e4a5b6c7d-AMS'],
        ['CDN-Loop', 'cloudflare'],
        ['X-Amzn-Trace-Id', 'Root=1-67891233-abcdef012345678912345678'],
      ],
      trace: [
        ['traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
        ['tracestate', 'congo=t61rcWkgMzE'],
      ],
      // What a browser adds to a fetch from the app's page.
      browser: [
        ['sec-ch-ua', '"Chromium";v="131", "Not_A Brand";v="24"'],
        ['sec-ch-ua-mobile', '?0'],
        ['sec-ch-ua-platform', '"Linux"'],
        ['Sec-Fetch-Site', 'same-site'],
        ['Sec-Fetch-Mode', 'cors'],
        ['Sec-Fetch-Dest', 'empty'],
        ['Referer', 'https://evil.example.test/page'],
        ['Priority', 'u=1, i'],
        ['Pragma', 'no-cache'],
        ['Cache-Control', 'no-cache'],
      ],
      ifNoneMatch: [['If-None-Match', '"abc"']],
      acceptHtml: [['Accept', 'text/html']],
      cacheControl: [['Cache-Control', 'no-cache']],
      userAgent: [['User-Agent', 'gen/1.0']],
      acceptLanguage: [['Accept-Language', 'de']],
    };
    if (c.extraHeader !== 'none') headers.push(...extra[c.extraHeader]);
    let body: Buffer | null = null;
    if (method === 'POST' || method === 'PUT') {
      body = bodyFor(c, token, second);
      // Some clients name a type on every request, a body-less POST too (no Content-Length: the lane answers it).
      if (c.contentType !== 'none' && (body !== null || c.pick % 3 === 0)) headers.push(['Content-Type', c.contentType]);
    }
    wires.push({ method, path, headers, body, chunked: c.chunked && body !== null && body.length > 0 });
  }
  return [wires[0], wires[1]];
}

// ---- sending and comparing ----

interface Answer {
  status: number;
  message: string;
  headers: string[];
  body: Buffer;
}

/**
 * A keep-alive HTTP/1.1 connection written by hand: header names and values go out byte for byte as
 * generated (any letter case, repeated lines, bytes Node's client refuses), answers are read raw.
 */
class RawClient {
  private socket: net.Socket | null = null;
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  constructor(private readonly port: number) {}

  private connect(): net.Socket {
    const socket = net.connect(this.port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    const gone = () => {
      if (this.socket === socket) this.socket = null;
      this.waiting?.();
    };
    socket.on('close', gone);
    socket.on('error', gone);
    this.buffer = Buffer.alloc(0);
    return socket;
  }

  async send(w: Wire): Promise<Answer> {
    this.socket ??= this.connect();
    const socket = this.socket;
    const lines = [`${w.method} ${w.path} HTTP/1.1`, 'Host: 127.0.0.1'];
    for (const [name, value] of w.headers) lines.push(`${name}: ${value}`);
    if (w.body !== null) lines.push(w.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${w.body.length}`);
    const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    const body =
      w.body === null
        ? Buffer.alloc(0)
        : w.chunked
          ? Buffer.concat([Buffer.from(`${w.body.length.toString(16)}\r\n`), w.body, Buffer.from('\r\n0\r\n\r\n')])
          : w.body;
    socket.write(Buffer.concat([head, body]));
    const answer = await this.read(w.method === 'HEAD', socket);
    const connection = answer.headers.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'connection');
    if (connection >= 0 && answer.headers[connection + 1].toLowerCase() === 'close') {
      socket.destroy();
      this.socket = null;
    }
    return answer;
  }

  private async read(head: boolean, socket: net.Socket): Promise<Answer> {
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...rest] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
        const m = /^HTTP\/1\.1 (\d{3}) (.*)$/.exec(statusLine);
        if (!m) throw new Error(`not a status line: ${statusLine}`);
        const headers = rest.flatMap((l) => {
          const i = l.indexOf(':');
          return [l.slice(0, i), l.slice(i + 1).trim()];
        });
        const status = Number(m[1]);
        const lengthAt = headers.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'content-length');
        if (lengthAt < 0 && !head && status !== 204 && status !== 304) throw new Error(`an answer without Content-Length: ${statusLine}`);
        const length = head || status === 204 || status === 304 || lengthAt < 0 ? 0 : Number(headers[lengthAt + 1]);
        if (this.buffer.length >= end + 4 + length) {
          const body = this.buffer.subarray(end + 4, end + 4 + length);
          this.buffer = this.buffer.subarray(end + 4 + length);
          return { status, message: m[2], headers, body: Buffer.from(body) };
        }
      }
      if (this.socket !== socket) throw new Error('connection closed before the answer was complete');
      await new Promise<void>((r) => (this.waiting = r));
      this.waiting = null;
    }
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function normalise(a: Answer, sentId: string | undefined): { status: number; message: string; headers: string[]; body: string } {
  const headers = [...a.headers];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i].toLowerCase();
    if (name === 'date') headers[i + 1] = '<date>';
    if (name === 'x-request-id' && headers[i + 1] !== sentId) {
      expect(headers[i + 1]).toMatch(UUID);
      headers[i + 1] = '<generated>';
    }
  }
  const body = a.body.toString('latin1').replace(/"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/, '"timestamp":"<t>"');
  return { status: a.status, message: a.message, headers, body };
}

/** Revokes a pooled session from the other instance and waits until this one has dropped its copy. */
async function revokeOne(pick: number): Promise<void> {
  const i = pick % pools.valid.length;
  const token = pools.valid[i];
  // SQLite instances share no bus: there this instance revokes, as a single-instance deployment does.
  const revoker = BACKEND === 'pg' ? other : t;
  await revoker.app.services.sessions.revokeToken(token);
  const until = Date.now() + 5_000;
  while (t.app.services.sessions.peekLocal(token) !== null && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  expect(t.app.services.sessions.peekLocal(token)).toBeNull();
  pools.revoked.push(token);
  pools.valid[i] = await warm((await makeSession(t)).token);
}

/** Cases run in batches, revocations between them. One connection per server, in order: counting depends on the order of hits, and six connections at once measured half as fast on two cores. */
const BATCH = 100;

const is2xx = (status: number) => status >= 200 && status < 300;
const ACCESS_MESSAGES = new Set(['request completed', 'request errored', 'request aborted']);

/** The access lines a log holds from its line `from` on, each parsed. */
function accessLines(log: Log, from: number): Record<string, unknown>[] {
  return log.lines
    .slice(from)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => ACCESS_MESSAGES.has(e.msg as string));
}

/**
 * An access line without what differs between any two answers (its time and duration), its request
 * id checked against the answer's X-Request-ID and, when generated, replaced as in the headers.
 */
function normaliseLine(e: Record<string, unknown>, answers: Answer[], sentId: string | undefined): Record<string, unknown> {
  const { time: _time, responseTime, req, ...rest } = e as { time: unknown; responseTime: unknown; req: { id?: string } };
  expect(typeof responseTime).toBe('number');
  const given = answers.map((a) => a.headers[a.headers.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'x-request-id') + 1]);
  expect(given, 'the line names the request id of an answer').toContain(req.id);
  return { ...rest, req: { ...req, id: req.id === sentId ? req.id : '<generated>' } };
}

/** Waits until the app's line for the last answer is written (on the response's `close`, just after the answer). */
async function settledLines(lane: Side, plain: Side, from: [number, number]): Promise<[Record<string, unknown>[], Record<string, unknown>[]]> {
  let left = accessLines(lane.log, from[0]);
  let right = accessLines(plain.log, from[1]);
  for (let i = 0; i < 60 && left.length !== right.length; i++) {
    await new Promise((r) => (i < 10 ? setImmediate(r) : setTimeout(r, 2)));
    left = accessLines(lane.log, from[0]);
    right = accessLines(plain.log, from[1]);
  }
  return [left, right];
}

interface Clients {
  lane: RawClient;
  plain: RawClient;
}

/** Sends one case to both servers and compares the answers and the access lines they wrote. */
async function runCase(
  c: Case,
  expired: [string, string] | null,
  sides: { lane: Side; plain: Side },
  clients: Clients,
  statuses: Run['statuses'],
): Promise<void> {
  const { lane, plain } = clients;
  const [w0, w1] = await wireFor(c, expired);
  const sentId = w0.headers.find(([k]) => k.toLowerCase() === 'x-request-id')?.[1];
  const from: [number, number] = [sides.lane.log.lines.length, sides.plain.log.lines.length];
  const laneAnswers: Answer[] = [];
  const plainAnswers: Answer[] = [];
  let a = await lane.send(w0);
  let b = await plain.send(w1);
  laneAnswers.push(a);
  plainAnswers.push(b);
  let left = normalise(a, sentId);
  let right = normalise(b, sentId);
  // The servers share one session cache, whose in-process entries live a minute of wall-clock time:
  // when one expired just before a pair, the first request loaded it again (from Redis or the
  // database) and the second found it in memory; the bridge answer says which. Then the pair, warm
  // on both sides now, is sent again.
  const reloaded = (x: string) => x.includes('"cacheSource":"db"') || x.includes('"cacheSource":"unified"');
  if (JSON.stringify(left) !== JSON.stringify(right) && (reloaded(left.body) || reloaded(right.body))) {
    a = await lane.send(w0);
    b = await plain.send(w1);
    laneAnswers.push(a);
    plainAnswers.push(b);
    left = normalise(a, sentId);
    right = normalise(b, sentId);
  }
  if (JSON.stringify(left) !== JSON.stringify(right)) {
    expect({ case: c, wire: w0, answer: left }).toEqual({ case: c, wire: w0, answer: right });
  }
  const [laneLines, plainLines] = await settledLines(sides.lane, sides.plain, from);
  // With a threshold, a 2xx has a line only when it happened to be slow (a loaded machine, a pause),
  // which one side may be and the other not: those are left out here (expectInfoLines checks them).
  const compared = (e: Record<string, unknown>) => sides.lane.slowMs === 0 || !is2xx((e.res as { statusCode: number }).statusCode);
  const lines = {
    lane: laneLines.filter(compared).map((e) => normaliseLine(e, laneAnswers, sentId)),
    plain: plainLines.filter(compared).map((e) => normaliseLine(e, plainAnswers, sentId)),
  };
  if (JSON.stringify(lines.lane) !== JSON.stringify(lines.plain)) {
    expect({ case: c, wire: w0, status: a.status, lines: lines.lane }).toEqual({ case: c, wire: w0, status: a.status, lines: lines.plain });
  }
  statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  for (const x of laneAnswers) if (x.status < 200 || x.status >= 300) statuses.nonSuccess = (statuses.nonSuccess ?? 0) + 1;
  for (const x of laneAnswers) if (x.status === 429) statuses.refused = (statuses.refused ?? 0) + 1;
}

/** The refusal log's lines (one per address, class and minute, with the count), in a stable order. */
function refusalLines(log: Log): Record<string, unknown>[] {
  return log.lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.msg === REFUSAL_MESSAGE)
    .map(({ remoteAddress, limitClass, count, minute }) => ({ remoteAddress, limitClass, count, minute }))
    .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
}

interface Run extends FastLaneStats {
  /** Cases by status of the (last) answer; `nonSuccess`: every answer that was not 2xx, `refused`: every 429, retries included. */
  statuses: Record<number, number> & { nonSuccess?: number; refused?: number };
  /** The access lines the lane's server wrote. */
  lines: { statusCode: number; responseTime: number }[];
  /** The refusal lines each server wrote (flushed at the end). */
  refusals: { lane: Record<string, unknown>[]; plain: Record<string, unknown>[] };
}

async function runCases(limitsOn: boolean, slowMs: number, count: number, seed: number): Promise<Run> {
  const stats: FastLaneStats = { answered: 0, handedOff: 0 };
  const sides = await servers(limitsOn, slowMs, stats);
  const clients = { lane: new RawClient(sides.lane.server.port), plain: new RawClient(sides.plain.server.port) };
  const statuses: Run['statuses'] = {};
  const deadline = Date.now() + RUN_TIMEOUT_MS - 5_000;
  try {
    const cases = fc.sample(arbAny, { numRuns: count, seed });
    const twins = await expiredTwins(cases.filter(needsTwins).length);
    for (let start = 0; start < cases.length; start += BATCH) {
      if (Date.now() > deadline) throw new Error(`out of time after ${start} of ${count} cases`);
      const batch = cases.slice(start, start + BATCH).map((c) => ({ c, expired: needsTwins(c) ? twins.pop()! : null }));
      for (const { c } of batch) if (c.revoke) await revokeOne(c.pick);
      // The limiters' windows all end together now and then, so budgets fill and refill.
      if (start % WINDOW_CASES === 0) limiterNow += 61_000;
      for (const { c, expired } of batch) await runCase(c, expired, sides, clients, statuses);
    }
  } finally {
    clients.lane.close();
    clients.plain.close();
    await sides.lane.server.close(0);
    await sides.plain.server.close(0);
    sides.lane.ctx.refusals.close();
    sides.plain.ctx.refusals.close();
  }
  const lines = accessLines(sides.lane.log, 0).map((e) => ({
    statusCode: (e.res as { statusCode: number }).statusCode,
    responseTime: e.responseTime as number,
  }));
  return { ...stats, statuses, lines, refusals: { lane: refusalLines(sides.lane.log), plain: refusalLines(sides.plain.log) } };
}

/**
 * At info with the default threshold: a line for each answer that is not 2xx (no 503 here) and not a
 * refusal, and for a 2xx only when it was slow; the refusals are counted in the refusal log, the
 * lane's as the app's, every one of them.
 */
function expectInfoLines(r: Run): void {
  expect(r.lines.filter((l) => l.statusCode < 200 || l.statusCode >= 300)).toHaveLength((r.statuses.nonSuccess ?? 0) - (r.statuses.refused ?? 0));
  expect(r.lines.filter((l) => l.statusCode === 429)).toEqual([]);
  expect(r.refusals.lane).toEqual(r.refusals.plain);
  expect(r.refusals.lane.reduce((n, l) => n + (l.count as number), 0)).toBe(r.statuses.refused ?? 0);
  for (const l of r.lines.filter((x) => x.statusCode >= 200 && x.statusCode < 300)) expect(l.responseTime).toBeGreaterThanOrEqual(1000);
}

describe(`fast lane, differential (${BACKEND})`, () => {
  it(
    `when ${CASES_LIMITS_OFF} generated requests go through the lane and through the app alone with limits off, then every answer and access line is the same`,
    async () => {
      const r = await runCases(false, 1000, CASES_LIMITS_OFF, 26_1);
      // The lane did answer a good share itself, and the rest reached the app.
      expect(r.answered).toBeGreaterThan(CASES_LIMITS_OFF * 0.2);
      expect(r.handedOff).toBeGreaterThan(CASES_LIMITS_OFF * 0.3);
      expect(r.statuses[200]).toBeGreaterThan(0);
      expect(r.statuses[401]).toBeGreaterThan(0);
      expect(r.statuses[400]).toBeGreaterThan(0);
      expectInfoLines(r);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    `when ${CASES_LIMITS_ON} generated requests go through both with limits on (small budgets), then every answer, refusal and access line is the same`,
    async () => {
      const r = await runCases(true, 1000, CASES_LIMITS_ON, 26_2);
      expect(r.answered).toBeGreaterThan(CASES_LIMITS_ON * 0.1);
      expect(r.statuses[429]).toBeGreaterThan(0);
      expect(r.statuses[200]).toBeGreaterThan(0);
      expectInfoLines(r);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    `when ${CASES_EVERY_LINE} generated requests go through both with ACCESS_LOG_SLOW_MS=0, then each answer has the same access line, the lane's own included`,
    async () => {
      const r = await runCases(false, 0, CASES_EVERY_LINE, 26_3);
      expect(r.answered).toBeGreaterThan(CASES_EVERY_LINE * 0.2);
      expect(r.lines.length).toBeGreaterThanOrEqual(CASES_EVERY_LINE);
    },
    RUN_TIMEOUT_MS,
  );
});
