import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteShape } from '../../src/http/define-route.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { makeUser } from '../helpers/factories.js';
import { startTestApp, TEST_BRIDGE_SECRET, type TestApp } from '../helpers/test-app.js';

/*
 * Property: whatever arrives — malformed bodies, odd content types, broken query strings, junk
 * headers, random path parameters, with or without a valid session or bridge secret — no route
 * answers 5xx, and every 4xx is the JSON error shape. Routes are enumerated from the route table
 * and the module registry (every module installed first), so new routes are fuzzed without edits.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 250);
const BATCH = 8;

type AnyRoute = RouteShape;
type Auth = 'none' | 'customer' | 'admin' | 'superadmin' | 'writer' | 'bridge' | 'bridge+customer' | 'cookie' | 'bogus';

interface FuzzRequest {
  route: AnyRoute;
  method: string;
  segments: string[];
  query: [string, string][];
  body: { raw: string | Uint8Array; type?: string } | null;
  headers: Record<string, string>;
  auth: Auth;
}

const ascii = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });
const weird = fc.constantFrom(
  '',
  ' ',
  '0',
  '-1',
  '1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '%',
  '%zz',
  '%E0%A4%A',
  '%00',
  '..%2F..',
  '__proto__',
  'constructor',
  'a'.repeat(3000),
  'ses_' + 'A'.repeat(43),
  '😀',
  '\u202e',
);

const FIELDS = [
  'email',
  'password',
  'new_password',
  'current_password',
  'name',
  'last_name',
  'lastName',
  'user_name',
  'userName',
  'username',
  'phone',
  'token',
  'code',
  'session_id',
  'sessionId',
  'user_id',
  'userId',
  'id',
  'user_type',
  'userType',
  'is_verified',
  'metadata',
  'redirect_url',
  'resetUrl',
  'lang',
  'dob',
  'gender',
  'picture',
  'ip',
  'user_agent',
  'validation_mode',
  'reason',
  'method',
  'modules',
  'enabled',
  'config',
  'page',
  'limit',
  'search',
  'content',
  'title',
  'slug',
  'is_business',
  '__proto__',
  'constructor',
];

const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.string({ maxLength: 80 }),
  weird,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
  fc.emailAddress(),
);

const jsonBody = (v: unknown) => ({ raw: JSON.stringify(v), type: 'application/json' });
const body: fc.Arbitrary<FuzzRequest['body']> = fc.oneof(
  fc.constant(null),
  fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 12 })), value, { maxKeys: 8 }).map(jsonBody),
  fc.jsonValue({ maxDepth: 3 }).map(jsonBody),
  fc.string({ maxLength: 200 }).map((raw) => ({ raw, type: 'application/json' })),
  fc
    .constantFrom('[', '{"a":', '"\\ud800"', '1e99999', '{"__proto__":{"admin":true}}', '['.repeat(4000), 'null', '')
    .map((raw) => ({ raw, type: 'application/json' })),
  fc
    .tuple(
      fc.string({ maxLength: 100 }),
      fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'application/merge-patch+json',
        'image/png',
        'garbage',
      ),
    )
    .map(([raw, type]) => ({ raw, type })),
  fc.uint8Array({ maxLength: 64 }).map((raw) => ({ raw, type: 'application/json' })),
);

const headers = fc.dictionary(
  fc.constantFrom(
    'X-Session-ID',
    'Cookie',
    'X-Bridge-Secret',
    'Origin',
    'Referer',
    'X-Forwarded-For',
    'Accept-Language',
    'User-Agent',
    'X-Request-ID',
    'Accept',
    'Content-Encoding',
  ),
  fc.oneof(
    ascii(120),
    weird.filter((w) => /^[\x20-\x7e]*$/.test(w)),
  ),
  { maxKeys: 4 },
);

const query = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom('session_id', 'page', 'limit', 'search', 'sort', 'order', 'token', 'email', 'redirect_url', 'user_type', 'a[b]', '__proto__'),
      ascii(10),
    ),
    fc.oneof(ascii(40), weird),
  ),
  { maxLength: 5 },
);

const auth = fc.constantFrom<Auth>('none', 'customer', 'admin', 'superadmin', 'writer', 'bridge', 'bridge+customer', 'cookie', 'bogus');

let t: TestApp;
const routes: AnyRoute[] = [];
const sessions = new Map<string, string>();
const userIds = new Map<string, string>();
let sent = 0;
let batches = 0;

async function freshSessions(): Promise<void> {
  for (const [kind, id] of userIds) sessions.set(kind, (await t.app.services.sessions.create(id, { ip: '127.0.0.1', userAgent: 'fuzz' })).token);
}

function segmentArb(): fc.Arbitrary<string> {
  return fc.oneof(fc.string({ maxLength: 30 }).map(encodeURIComponent), weird, fc.uuid(), fc.constant(userIds.get('customer') ?? 'x'));
}

const request = fc
  .record({
    routeIndex: fc.nat(),
    method: fc.option(fc.constantFrom('get', 'post', 'put', 'patch', 'delete'), { freq: 8 }),
    segments: fc.array(segmentArb(), { minLength: 4, maxLength: 4 }),
    query,
    body,
    headers,
    auth,
  })
  .map(({ routeIndex, method, ...rest }) => {
    const route = routes[routeIndex % routes.length];
    // The route itself stays out of the printed counterexample: its method and path say enough.
    const r = { ...rest, method: (method ?? route.method).toUpperCase(), path: route.path } as FuzzRequest & { path: string };
    Object.defineProperty(r, 'route', { value: route, enumerable: false });
    return r as FuzzRequest;
  });

async function send(r: FuzzRequest): Promise<{ status: number; text: string; label: string }> {
  let i = 0;
  const path = r.route.path.replace(/:\w+/g, () => r.segments[i++ % r.segments.length] || 'x');
  const qs = r.query.map(([k, v]) => (v.includes('%') ? `${encodeURIComponent(k)}=${v}` : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)).join('&');
  const h: Record<string, string> = { ...r.headers };
  const session = sessions.get(r.auth === 'bridge+customer' || r.auth === 'cookie' ? 'customer' : r.auth);
  if (r.auth === 'cookie') h.Cookie = `session_id=${session}`;
  else if (session) h['X-Session-ID'] = session;
  if (r.auth === 'bogus') h['X-Session-ID'] = 'ses_' + 'x'.repeat(43);
  if (r.auth.startsWith('bridge')) h['X-Bridge-Secret'] = TEST_BRIDGE_SECRET;
  const init: RequestInit = { method: r.method, headers: h, redirect: 'manual' };
  if (r.body && r.method !== 'GET') {
    init.body = r.body.raw as RequestInit['body'];
    if (r.body.type) h['Content-Type'] = r.body.type;
  }
  const label = `${r.method} ${path}${qs ? `?${qs}` : ''} auth=${r.auth} type=${h['Content-Type'] ?? '-'}`;
  sent += 1;
  const res = await fetch(`${t.url}${path}${qs ? `?${qs}` : ''}`, init);
  return { status: res.status, text: await res.text(), label };
}

function check(res: { status: number; text: string; label: string }): void {
  if (res.status >= 500) throw new Error(`${res.label} → ${res.status} ${res.text.slice(0, 300)}`);
  if (res.status >= 400) {
    let b: { success?: unknown; error?: unknown };
    try {
      b = JSON.parse(res.text);
    } catch {
      throw new Error(`${res.label} → ${res.status} without a JSON body: ${res.text.slice(0, 200)}`);
    }
    if (b.success !== false || typeof b.error !== 'string') throw new Error(`${res.label} → ${res.status} bad error shape: ${res.text.slice(0, 200)}`);
  }
}

beforeAll(async () => {
  // Social login on (no provider configured: nothing calls out), so its routes answer for real instead of 503 "off".
  t = await startTestApp({ env: { SOCIAL_LOGIN: 'true' } });
  const ids = t.app.modules.registry().map((m) => m.id);
  // Every module on, so their routes answer for real; one by one so a module that cannot install skips only itself.
  for (const id of ids) await t.app.modules.hub.install([id], { actor: 'fuzz' }).catch(() => undefined);
  await t.app.modules.reload();
  const seen = new Set<string>();
  for (const def of [...coreRoutes, ...t.app.modules.registry().flatMap((m) => m.routes)]) {
    const key = `${def.method} ${def.path}`;
    if (!seen.has(key)) routes.push(def);
    seen.add(key);
  }
  for (const kind of ['customer', 'admin', 'superadmin', 'writer'] as const) userIds.set(kind, (await makeUser(t, { user_type: kind })).id);
  await freshSessions();
}, 120_000);

afterAll(async () => t?.close());

describe('fuzzing every route', () => {
  it('when malformed bodies, queries, headers and path parameters hit every route, with and without credentials, then no answer is 5xx and every 4xx is a JSON error', async () => {
    expect(routes.length).toBeGreaterThan(30);
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        // A fuzzed logout may have ended a session; renew them now and then.
        if (++batches % 10 === 0) await freshSessions();
        const results = await Promise.all(batch.map(send));
        results.forEach(check);
      }),
      { numRuns: RUNS, endOnFailure: false },
    );
    expect(sent).toBeGreaterThanOrEqual(RUNS * BATCH);
  }, 300_000);

  it('when every route gets each classic malformed input with each kind of credential, then no answer is 5xx and every 4xx is a JSON error', async () => {
    const cases: Pick<FuzzRequest, 'body' | 'segments' | 'query'>[] = [
      { body: null, segments: ['x'], query: [] },
      { body: { raw: '{"email":', type: 'application/json' }, segments: ['%E0%A4%A'], query: [['page', '-1']] },
      { body: { raw: 'a=1', type: 'application/x-www-form-urlencoded' }, segments: ['0'], query: [['limit', '1e309']] },
      { body: jsonBody({ email: 'a'.repeat(5000), password: 7, name: { $gt: '' }, metadata: [1] }), segments: ['a'.repeat(300)], query: [['session_id', 'x']] },
      {
        body: jsonBody([null]),
        segments: ['..%2F..'],
        query: [
          ['__proto__', 'x'],
          ['a[b]', '1'],
        ],
      },
    ];
    const auths: Auth[] = ['none', 'admin', 'bridge+customer', 'cookie'];
    const before = sent;
    for (const route of routes) {
      if (++batches % 5 === 0) await freshSessions();
      const batch = cases.flatMap((c) => auths.map((a) => ({ ...c, route, method: route.method.toUpperCase(), headers: {}, auth: a })));
      (await Promise.all(batch.map(send))).forEach(check);
    }
    expect(sent - before).toBe(routes.length * cases.length * auths.length);
  }, 300_000);
});
