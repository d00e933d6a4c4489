import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('HTTP skeleton', () => {
  it('when /health is asked, then it answers ok', async () => {
    const r = await t.request('GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, status: 'ok' });
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it('when /ready is asked, then the database (and Redis when configured) are checked', async () => {
    const r = await t.request('GET', '/ready');
    expect(r.status).toBe(200);
    expect(r.body.checks.database).toBe('ok');
    if (t.app.redis) expect(r.body.checks.redis).toBe('ok');
  });

  it('when a route does not exist, then a JSON 404 comes back', async () => {
    const r = await t.request('GET', '/nope');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ success: false, error: 'Not found', code: 'NOT_FOUND' });
  });

  it('when the JSON body is malformed, then the answer is 400 INVALID_JSON, not 500', async () => {
    const r = await t.request('POST', '/health', { raw: '{"a":', headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, code: 'INVALID_JSON' });
    expect(typeof r.body.error).toBe('string');
  });

  it('when the body is over the size limit, then the answer is 413', async () => {
    const big = JSON.stringify({ x: 'a'.repeat(200 * 1024) });
    const r = await t.request('POST', '/health', { raw: big, headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('when helmet is on, then security headers are set', async () => {
    const r = await t.request('GET', '/health');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-powered-by')).toBeNull();
  });
});

describe('session service', () => {
  it('when a session is created, then only its hash is stored and the token validates', async () => {
    const { user, token } = await makeSession(t);
    expect(token).toMatch(/^ses_[A-Za-z0-9_-]{43}$/);
    const rows = await t.app.repos.sessions.listByUser(user.id);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0])).not.toContain(token.slice(4));
    expect(rows[0].session_prefix).toBe(token.slice(0, 12));
    const v = await t.app.services.sessions.validate(token);
    expect(v.user.id).toBe(user.id);
  });

  it('when a session is revoked, then validation fails with "Invalid session"', async () => {
    const { token } = await makeSession(t);
    await t.app.services.sessions.validate(token);
    await t.app.services.sessions.revokeToken(token);
    await expect(t.app.services.sessions.validate(token)).rejects.toMatchObject({ status: 401, message: 'Invalid session' });
  });
});
