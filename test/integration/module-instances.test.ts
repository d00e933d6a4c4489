import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin } from './module-helpers.js';

/**
 * Two instances on one database. With Redis (pg backend) B hears `modules:changed` at once; on the
 * embedded default (SQLite, in-process bus each) B notices the revision row within its 2 s poll.
 */
let a: TestApp;
let b: TestApp;
let root: string;
beforeAll(async () => {
  a = await startTestApp();
  b = await startTestApp({ sharing: a });
  root = (await superadmin(a)).token;
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const hub = (path: string, body: unknown = {}) => a.request('POST', `/api/v1/modules/install${path}`, { session: root, body });

describe(`a module change on one instance reaches the other without a restart (${BACKEND})`, () => {
  it('when ext-business is installed through A, then B accepts and shows the business fields within seconds', async () => {
    const { token } = await makeSession(b);
    expect((await b.request('PUT', '/auth/user/me', { session: token, body: { biz_name: 'Early' } })).body.code).toBe('module_not_installed');
    expect((await hub('/ext-business/run')).status).toBe(200);
    await expect
      .poll(async () => (await b.request('PUT', '/auth/user/me', { session: token, body: { biz_name: 'Beta SA', biz_country: 'FR' } })).status)
      .toBe(200);
    const me = await b.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.body.user).toMatchObject({ biz_name: 'Beta SA', biz_country: 'FR' });
    expect(b.app.modules.isInstalled('ext-business')).toBe(true);
  });

  it('when a module is switched off and uninstalled through A, then B answers 503 disabled and then 503 not installed for its routes', async () => {
    expect((await hub('/ext-business/disable')).status).toBe(200);
    await expect.poll(async () => (await b.request('GET', '/api/v1/business/countries')).status).toBe(503);
    expect((await hub('/ext-business/uninstall')).status).toBe(200);
    await expect
      .poll(async () => {
        const r = await b.request('GET', '/api/v1/business/countries');
        return { status: r.status, error: r.body.error };
      })
      .toMatchObject({ status: 503, error: expect.stringMatching(/not installed/) });
    const { token } = await makeSession(b);
    const me = await b.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.body.user).not.toHaveProperty('biz_name');
  });
});
