import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession, uniqueEmail } from '../helpers/factories.js';

// What HTTP clients and proxies expect beyond the body: 405 with Allow, one `details` shape, 503 for a
// feature that is not installed, Retry-After on every 429 and 503. No module is installed here.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('wrong method on a known path', () => {
  it('when a known path is called with another method, then 405 with Allow and the JSON envelope', async () => {
    for (const [method, path, allow] of [
      ['GET', '/auth/login', 'POST'],
      ['DELETE', '/auth/user/me', 'GET, HEAD, PUT'],
      ['PATCH', '/auth/admin/users/some-id', 'GET, HEAD, PUT, DELETE'],
    ] as const) {
      const r = await t.request(method, path);
      expect(r.status, `${method} ${path}`).toBe(405);
      expect(r.headers.get('allow')?.split(', ').sort()).toEqual(allow.split(', ').sort());
      expect(r.body).toMatchObject({ success: false, code: 'METHOD_NOT_ALLOWED', error: expect.stringContaining(method) });
    }
  });

  it('when the path is unknown, or the method is right, then it stays a 404 or the route answers', async () => {
    expect((await t.request('GET', '/auth/no-such-thing')).status).toBe(404);
    expect((await t.request('HEAD', '/health')).status).toBe(200);
    expect((await t.request('POST', '/auth/login', { body: { email: 'nobody@example.com', password: 'x'.repeat(10) } })).status).toBe(401);
  });
});

describe('error details', () => {
  it('when a password rule or the current password refuses, then details is an array of {field, message} like validation errors', async () => {
    const weak = await t.request('POST', '/auth/register/public', { body: { email: uniqueEmail('det'), password: 'short', name: 'D' } });
    expect(weak.status).toBe(400);
    expect(weak.body.details).toEqual([{ field: 'password', message: expect.any(String) }]);

    const { token } = await makeSession(t);
    const wrong = await t.request('POST', '/auth/password-change/self', {
      session: token,
      body: { current_password: 'Not-The-Password-1', new_password: 'Another-Horse-43' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details).toEqual([{ field: 'current_password', message: expect.any(String) }]);

    const invalid = await t.request('POST', '/auth/login', { body: { email: 'not an email' } });
    expect(invalid.status).toBe(400);
    expect(Array.isArray(invalid.body.details)).toBe(true);
    for (const d of invalid.body.details) expect(Object.keys(d).sort()).toEqual(['field', 'message']);
  });
});

describe('modules that are not installed', () => {
  it('when a registry module is not installed, then its routes answer 503 MODULE_DISABLED naming the install command, with Retry-After', async () => {
    for (const [method, path, id] of [
      ['GET', '/api/v1/post-types', 'post-types'],
      ['GET', '/auth/two_factor/system', 'two-factor'],
    ] as const) {
      const r = await t.request(method, path);
      expect(r.status, path).toBe(503);
      expect(r.body).toMatchObject({ success: false, code: 'MODULE_DISABLED' });
      expect(r.body.error).toContain(`gatehouse module install ${id}`);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('Retry-After', () => {
  it('when bridge validation is not configured, then its 503 carries Retry-After', async () => {
    const bare = await startTestApp({ env: { BRIDGE_VALIDATION_SECRET: '' } });
    try {
      const r = await bare.request('POST', '/auth/bridge/validate', { body: {}, headers: { 'X-Bridge-Secret': 'x'.repeat(40) } });
      expect(r.status).toBe(503);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await bare.close();
    }
  });
});
