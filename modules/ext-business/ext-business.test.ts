import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { makeSession } from '../../test/helpers/factories.js';
import { startTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { ISO_COUNTRIES } from './countries.js';

const BIZ = ['is_business', 'biz_name', 'biz_country', 'biz_state', 'biz_position', 'biz_postal_code'];
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const put = (token: string, body: Record<string, unknown>) => t.request('PUT', '/auth/user/me', { session: token, body });

async function userColumns(): Promise<string[]> {
  if (t.app.dialect === 'sqlite') {
    const [rows] = await t.app.sequelize.query('PRAGMA table_info(users)');
    return (rows as { name: string }[]).map((r) => r.name);
  }
  const [rows] = await t.app.sequelize.query(
    "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'users'",
  );
  return (rows as { column_name: string }[]).map((r) => r.column_name);
}

describe(`ext-business (${BACKEND})`, () => {
  it('when the module is not installed, then business fields are refused with module_not_installed and absent from users', async () => {
    const { token } = await makeSession(t);
    const r = await put(token, { is_business: true, biz_name: 'Acme' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('module_not_installed');
    const me = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    for (const f of BIZ) expect(me.body.user).not.toHaveProperty(f);
    const route = await t.request('GET', '/api/v1/business/countries');
    expect([route.status, route.body.code]).toEqual([503, 'MODULE_DISABLED']);
    expect(route.body.error).toContain('gatehouse module install ext-business');
  });

  it('when installed, then PUT /auth/user/me stores the business fields and every user object shows them', async () => {
    await t.app.modules.hub.install(['ext-business']);
    const { user, token } = await makeSession(t);
    const me0 = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me0.body.user).toMatchObject({ is_business: null, biz_name: null, biz_country: null });
    const r = await put(token, {
      is_business: true,
      biz_name: '  Acme Iberia S.L.  ',
      biz_country: 'es',
      biz_state: 'Madrid',
      biz_position: 'CTO',
      biz_postal_code: '28001',
    });
    expect(r.status).toBe(200);
    const expected = { is_business: true, biz_name: 'Acme Iberia S.L.', biz_country: 'ES', biz_state: 'Madrid', biz_position: 'CTO', biz_postal_code: '28001' };
    expect(r.body.data.user).toMatchObject(expected);
    expect((await t.request('GET', '/auth/user/me', { session: token, bridge: true })).body.user).toMatchObject(expected);
    expect((await t.request('GET', '/auth/me', { session: token })).body.data.user).toMatchObject(expected);
    const admin = await makeSession(t, { user_type: 'admin' });
    expect((await t.request('GET', `/auth/admin/users/${user.id}`, { session: admin.token })).body.data.user).toMatchObject(expected);
  });

  it('when values are out of bounds, then the update answers 400 naming the field and stores nothing', async () => {
    const { token } = await makeSession(t);
    const cases: [string, unknown][] = [
      ['biz_country', 'XX'],
      ['biz_country', 'UK'],
      ['biz_country', 'ESP'],
      ['biz_postal_code', '28#001'],
      ['biz_postal_code', '1'.repeat(21)],
      ['biz_name', 'a'.repeat(201)],
      ['biz_state', 'b'.repeat(101)],
      ['biz_position', 'line\nbreak'],
      ['is_business', 'yes'],
    ];
    for (const [field, value] of cases) {
      const r = await put(token, { [field]: value });
      expect(r.status, `${field}=${String(value)}`).toBe(400);
      expect(JSON.stringify(r.body.details ?? r.body.error)).toContain(field);
    }
    const country = await put(token, { biz_country: 'XX' });
    expect(country.body.error).toBe('biz_country: must be an ISO 3166-1 alpha-2 country code such as ES or US');
    const me = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.body.user).toMatchObject({ biz_country: null, biz_postal_code: null, biz_name: null, is_business: null });
  });

  it('when a field is sent empty or null, then it is cleared', async () => {
    const { token } = await makeSession(t);
    await put(token, { biz_name: 'Temp', biz_country: 'PT', is_business: true });
    const r = await put(token, { biz_name: '', biz_country: null, is_business: null });
    expect(r.status).toBe(200);
    expect(r.body.data.user).toMatchObject({ biz_name: null, biz_country: null, is_business: null });
  });

  it('when the countries are listed, then every ISO 3166-1 alpha-2 code comes with a name', async () => {
    const r = await t.request('GET', '/api/v1/business/countries');
    expect(r.status).toBe(200);
    expect(r.body.data.countries).toHaveLength(249);
    expect(ISO_COUNTRIES).toHaveLength(249);
    expect(r.body.data.countries).toContainEqual({ code: 'ES', name: 'Spain' });
  });

  it('when the migration runs down and up again, then the columns go and come back and sessions survive', async () => {
    const { token } = await makeSession(t);
    await t.app.modules.hub.uninstall('ext-business', { dropData: true });
    const cols = await userColumns();
    for (const f of BIZ) expect(cols).not.toContain(f);
    expect((await t.request('GET', '/auth/validation', { session: token })).status).toBe(200);
    await t.app.modules.hub.install(['ext-business']);
    expect(await userColumns()).toEqual(expect.arrayContaining(BIZ));
    expect((await put(token, { biz_country: 'US' })).status).toBe(200);
  });
});
