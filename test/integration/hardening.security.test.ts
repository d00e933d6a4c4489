import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/test-app.js';

const APP_ORIGIN = 'https://app.example.test';
const STACK = /\bat .+:\d+:\d+|node_modules|\.ts:\d+/;

let t: TestApp;
const bodies: string[] = [];
beforeAll(async () => {
  t = await startTestApp({ env: { CORS_ORIGINS: APP_ORIGIN } });
});
afterAll(async () => t?.close());

async function req(method: string, path: string, opts: Parameters<TestApp['request']>[2] = {}): Promise<TestResponse> {
  const r = await t.request(method, path, opts);
  bodies.push(r.text);
  return r;
}

function expectJsonError(r: TestResponse, status: number, code?: string): void {
  expect(r.status).toBe(status);
  expect(r.body.success).toBe(false);
  expect(typeof r.body.error).toBe('string');
  if (code) expect(r.body.code).toBe(code);
}

describe('security headers', () => {
  it('when any answer goes out, then the API security headers are on it, nothing may cache it, and X-Powered-By is not', async () => {
    for (const r of [
      await req('GET', '/health'),
      await req('GET', '/nope'),
      await req('POST', '/auth/login', { body: { email: 'x@example.com', password: 'wrong-password' } }),
    ]) {
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      expect(r.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.headers.get('referrer-policy')).toBe('no-referrer');
      expect(r.headers.get('x-powered-by')).toBeNull();
    }
  });
});

describe('CSRF: cookie-authenticated state changes', () => {
  const cookie = (token: string) => ({ Cookie: `session_id=${token}` });

  it('when the session comes from the cookie and no Origin or Referer is sent, then a PUT is refused 403 CSRF_REJECTED', async () => {
    const { token } = await makeSession(t);
    expectJsonError(await req('PUT', '/auth/user/me', { body: { name: 'Mallory' }, headers: cookie(token) }), 403, 'CSRF_REJECTED');
    expectJsonError(await req('POST', '/auth/logout', { headers: cookie(token) }), 403, 'CSRF_REJECTED');
    // Refused before anything changed: the session still works.
    expect((await req('GET', '/auth/user/me', { headers: { ...cookie(token), 'X-Bridge-Secret': t.env.BRIDGE_VALIDATION_SECRET } })).status).toBe(200);
  });

  it('when the Origin is foreign (or "null"), then the cookie-authenticated change is refused', async () => {
    const { token } = await makeSession(t);
    for (const origin of ['https://evil.example', 'null', 'https://app.example.test.evil.example', 'http://app.example.test']) {
      expectJsonError(await req('PUT', '/auth/user/me', { body: { name: 'M' }, headers: { ...cookie(token), Origin: origin } }), 403, 'CSRF_REJECTED');
    }
    expectJsonError(
      await req('PUT', '/auth/user/me', { body: { name: 'M' }, headers: { ...cookie(token), Referer: 'https://evil.example/app.example.test' } }),
      403,
      'CSRF_REJECTED',
    );
  });

  it('when the Origin is a configured origin or the public URL, or the Referer is from one, then the change goes through', async () => {
    const { token } = await makeSession(t);
    const publicOrigin = new URL(t.app.config.publicBaseUrl).origin;
    expect((await req('PUT', '/auth/user/me', { body: { name: 'A' }, headers: { ...cookie(token), Origin: APP_ORIGIN } })).status).toBe(200);
    expect((await req('PUT', '/auth/user/me', { body: { name: 'B' }, headers: { ...cookie(token), Origin: publicOrigin } })).status).toBe(200);
    expect((await req('PUT', '/auth/user/me', { body: { name: 'C' }, headers: { ...cookie(token), Referer: `${APP_ORIGIN}/profile?x=1` } })).status).toBe(200);
  });

  it('when the session comes from X-Session-ID, or the request only reads, then no Origin is needed', async () => {
    const { token } = await makeSession(t);
    expect((await req('PUT', '/auth/user/me', { body: { name: 'D' }, session: token })).status).toBe(200);
    expect((await req('GET', '/auth/me', { headers: cookie(token) })).status).toBe(200);
  });
});

describe('content types and sizes', () => {
  it('when a body that is not JSON is sent to a JSON route, with or without a schema, then the answer is 415', async () => {
    const { token } = await makeSession(t);
    expectJsonError(
      await req('POST', '/auth/login', { raw: 'email=a@b.c&password=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectJsonError(
      await req('POST', '/auth/logout', { raw: 'bye', session: token, headers: { 'Content-Type': 'text/plain' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectJsonError(await req('POST', '/auth/logout', { raw: 'bye', session: token }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    // Nothing was done: the session is still alive.
    expect((await req('GET', '/auth/me', { session: token })).status).toBe(200);
    // The same route with no body or a JSON body works.
    expect((await req('POST', '/auth/logout', { session: token })).status).toBe(200);
  });

  it('when a field is far longer than allowed, then the answer is 400, not 500', async () => {
    expectJsonError(await req('POST', '/auth/login', { body: { email: `${'a'.repeat(5000)}@x.test`, password: 'x' } }), 400, 'VALIDATION_ERROR');
    const r = await req('POST', '/auth/register/public', { body: { email: 'long@example.test', password: 'Plenty-Long-Pass-42', name: 'n'.repeat(50_000) } });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
  });

  it('when a page size beyond the maximum is asked for, then the page is capped', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const r = await req('GET', '/auth/admin/users?limit=1000000&page=1', { session: token });
    expect(r.status).toBe(200);
    expect(r.body.data.pagination.limit).toBeLessThanOrEqual(100);
  });

  it('when the request headers exceed 16 KB, then a JSON 431 comes back and the server keeps serving', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = http.request(`${t.url}/health`, { headers: { 'X-Big': 'a'.repeat(20 * 1024) } }, (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      });
      r.on('error', reject);
      r.end();
    });
    expect(status).toBe(431);
    expect(JSON.parse(body)).toMatchObject({ success: false, code: 'HEADERS_TOO_LARGE' });
    expect((await req('GET', '/health')).status).toBe(200);
  });

  it('when a HEAD request has headers over 16 KB, then the 431 comes back with no body', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const s = net.connect(Number(new URL(t.url).port), '127.0.0.1', () =>
        s.write(`HEAD /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`),
      );
      let data = '';
      s.on('data', (c) => (data += c));
      s.on('end', () => resolve(data));
      s.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    // Nothing after the head: a body here would be read as the start of the next answer.
    expect(raw.endsWith('\r\n\r\n')).toBe(true);
    expect(raw).not.toContain('HEADERS_TOO_LARGE');
  });

  it('when the request line is garbage, then a JSON 400 comes back on the socket', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const s = net.connect(Number(new URL(t.url).port), '127.0.0.1', () => s.write('NOT HTTP AT ALL\r\n\r\n'));
      let data = '';
      s.on('data', (c) => (data += c));
      s.on('end', () => resolve(data));
      s.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ success: false, code: 'BAD_REQUEST' });
  });
});

describe('no internals on the wire', () => {
  it('when errors of every kind are answered, then no body carries a stack trace or a source path', async () => {
    const { token } = await makeSession(t, { user_type: 'admin' });
    const json = { 'Content-Type': 'application/json' };
    const errors = [
      await req('POST', '/auth/login', { raw: '{"email":', headers: json }),
      await req('POST', '/auth/login', { raw: '['.repeat(5000), headers: json }),
      await req('POST', '/auth/login', { raw: Buffer.from([0xff, 0xfe, 0x00]), headers: { 'Content-Type': 'application/json; charset=utf-16' } }),
      await req('PUT', '/auth/user/me', { raw: '[1,2', headers: { ...json, 'X-Session-ID': 'ses_bogus' } }),
      await req('GET', '/auth/admin/users/%E0%A4%A', { session: token }),
      await req('GET', '/auth/admin/users/not-a-uuid', { session: token }),
      await req('GET', '/auth/admin/users?page=-1&limit=abc&sort[$gt]=1', { session: token }),
      await req('POST', '/auth/admin/users', { body: { email: ['x'], password: { a: 1 }, user_type: 'god' }, session: token }),
      await req('DELETE', '/auth/admin/users/00000000-0000-4000-8000-000000000000', { session: token }),
      await req('POST', '/auth/password-reset/complete', { body: { token: 'x'.repeat(10_000), password: 1 } }),
    ];
    for (const r of errors) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    expect(bodies.length).toBeGreaterThanOrEqual(errors.length);
    for (const b of bodies) expect(b).not.toMatch(STACK);
  });
});
