import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSession } from '../helpers/factories.js';
import { captureLog, startTestApp, type TestApp } from '../helpers/test-app.js';

/*
 * The access lines of 401 and 403 answers (src/http/middleware/access-log.ts; ASVS 5.0 16.3.2): each
 * names the client's address as TRUST_PROXY reads it (`clientIp`; `req.remoteAddress` stays the peer,
 * here the proxy) and, when the request carried a live session, the user (`userId`). Other lines carry
 * neither.
 */

const log = captureLog();
let t: TestApp;
beforeAll(async () => {
  // Behind one proxy: X-Forwarded-For names the client.
  t = await startTestApp({ logTo: log.stream, env: { LOG_LEVEL: 'info', TRUST_PROXY: '1' } });
});
afterAll(async () => t?.close());

interface Line {
  req: { id: string; method: string; url: string; remoteAddress: string };
  res: { statusCode: number };
  userId?: string;
  clientIp?: string;
}

/** The access line of the request whose id the answer gave. */
async function lineOf(res: { headers: Headers }): Promise<Line> {
  const id = res.headers.get('x-request-id');
  expect(id).toBeTruthy();
  let found: Line | undefined;
  await expect
    .poll(() => {
      const lines = log
        .text()
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Line);
      found = lines.find((e) => e.res !== undefined && e.req?.id === id);
      return found;
    })
    .toBeTruthy();
  return found!;
}

describe('401 and 403 access lines', () => {
  it('when a request without a session is refused 401, then its line has the forwarded client address and no user', async () => {
    const r = await t.request('GET', '/auth/me', { headers: { 'X-Forwarded-For': '203.0.113.7' } });
    expect(r.status).toBe(401);
    const line = await lineOf(r);
    expect(line).toMatchObject({ res: { statusCode: 401 }, clientIp: '203.0.113.7' });
    expect(line).not.toHaveProperty('userId');
    expect(line.req.remoteAddress).not.toBe('203.0.113.7');
  });

  it('when a dead session token is refused 401, then the line names no user and carries no token', async () => {
    const r = await t.request('GET', '/auth/me', { session: 'not-a-live-session-token', headers: { 'X-Forwarded-For': '203.0.113.8' } });
    expect(r.status).toBe(401);
    const line = await lineOf(r);
    expect(line).toMatchObject({ clientIp: '203.0.113.8' });
    expect(line).not.toHaveProperty('userId');
    expect(JSON.stringify(line)).not.toContain('not-a-live-session-token');
  });

  it('when a customer is refused 403 on an admin route, then its line names the user and the forwarded address', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('GET', '/auth/admin/users', { session: token, headers: { 'X-Forwarded-For': '198.51.100.23' } });
    expect(r.status).toBe(403);
    const line = await lineOf(r);
    expect(line).toMatchObject({ res: { statusCode: 403 }, userId: user.id, clientIp: '198.51.100.23' });
    expect(JSON.stringify(line)).not.toContain(token);
  });

  it('when a cookie post from another site is refused 403 CSRF_REJECTED, then its line has the address (the session is never looked up)', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('POST', '/auth/logout', {
      headers: { Cookie: `session_id=${token}`, Origin: 'https://evil.example.test', 'X-Forwarded-For': '192.0.2.44' },
      body: {},
    });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('CSRF_REJECTED');
    const line = await lineOf(r);
    expect(line).toMatchObject({ clientIp: '192.0.2.44' });
    expect(line).not.toHaveProperty('userId');
  });

  it('when a customer opens the admin console, then the 403 page has a line naming the user', async () => {
    const { user, token } = await makeSession(t);
    const res = await fetch(`${t.url}/admin`, { headers: { Cookie: `session_id=${token}`, 'X-Forwarded-For': '198.51.100.99' }, redirect: 'manual' });
    expect(res.status).toBe(403);
    const line = await lineOf(res);
    expect(line).toMatchObject({ userId: user.id, clientIp: '198.51.100.99' });
  });

  it('when an answer is another 4xx, then its line carries neither field', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('GET', '/auth/no-such-route', { session: token, headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(r.status).toBe(404);
    const line = await lineOf(r);
    expect(line).not.toHaveProperty('userId');
    expect(line).not.toHaveProperty('clientIp');
  });
});
