import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession } from '../../test/helpers/factories.js';
import { startTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { pictureForm, png } from '../../test/integration/picture-images.js';

const PRIVACY_FIELDS = ['gdpr_consent', 'gdpr_consent_at', 'gdpr_consent_version', 'ccpa_applies', 'ccpa_opt_out', 'ccpa_opt_out_at', 'privacy_region'];
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const me = (token: string) => t.request('GET', '/auth/user/me', { session: token, bridge: true });
const putPrivacy = (token: string, body: unknown) => t.request('PUT', '/auth/user/me/privacy', { session: token, body });

describe(`privacy (${BACKEND})`, () => {
  it('when the module is not installed, then there are no privacy fields or routes', async () => {
    const { token } = await makeSession(t);
    for (const f of PRIVACY_FIELDS) expect((await me(token)).body.user).not.toHaveProperty(f);
    // A route of a registry module that is not installed: 503 naming the install command.
    const route = await t.request('GET', '/auth/user/me/privacy', { session: token });
    expect([route.status, route.body.code]).toEqual([503, 'MODULE_DISABLED']);
    expect(route.body.error).toContain('gatehouse module install privacy');
  });

  it('when consent is given, then the version is required, the timestamp is set by the server and the history records it', async () => {
    await t.app.modules.hub.install(['privacy', 'ext-business', 'onboarding']);
    const { token } = await makeSession(t);
    const initial = await t.request('GET', '/auth/user/me/privacy', { session: token });
    expect(initial.body.data).toMatchObject({ gdpr_consent: null, privacy_region: null, allowed_regions: ['EU', 'EEA', 'UK', 'US-CA', 'US', 'OTHER'] });

    const noVersion = await putPrivacy(token, { gdpr_consent: true });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.details[0].field).toBe('gdpr_consent_version');
    expect((await putPrivacy(token, { gdpr_consent: true, gdpr_consent_version: 'v1', gdpr_consent_at: '2000-01-01T00:00:00Z' })).status).toBe(400);
    expect((await putPrivacy(token, { privacy_region: 'MARS' })).status).toBe(400);
    expect((await putPrivacy(token, {})).status).toBe(400);

    const before = Date.now();
    const r = await putPrivacy(token, { gdpr_consent: true, gdpr_consent_version: '2026-11', privacy_region: 'eu' });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ gdpr_consent: true, gdpr_consent_version: '2026-11', privacy_region: 'EU' });
    expect(new Date(r.body.data.gdpr_consent_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
    const opt = await putPrivacy(token, { ccpa_applies: true, ccpa_opt_out: true });
    expect(opt.body.data).toMatchObject({ ccpa_applies: true, ccpa_opt_out: true, ccpa_opt_out_at: expect.any(String) });
    expect((await putPrivacy(token, { gdpr_consent: false })).body.data.gdpr_consent).toBe(false);

    const user = (await me(token)).body.user;
    expect(user).toMatchObject({ gdpr_consent: false, gdpr_consent_version: '2026-11', ccpa_opt_out: true, privacy_region: 'EU' });
    const history = await t.request('GET', '/auth/user/me/privacy/history', { session: token });
    expect(history.body.data.events.map((e: { kind: string }) => e.kind)).toEqual([
      'gdpr_consent_withdrawn',
      expect.stringMatching(/ccpa_/),
      expect.stringMatching(/ccpa_/),
      expect.stringMatching(/gdpr_consent_given|privacy_region_changed/),
      expect.stringMatching(/gdpr_consent_given|privacy_region_changed/),
    ]);
    expect(history.body.data.events[0]).toMatchObject({ actor: 'self', details: { version: '2026-11' } });
    expect(history.body.data.pagination.total).toBe(5);
  });

  it('when privacy fields are sent to the profile update, then they are refused', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('PUT', '/auth/user/me', { session: token, body: { gdpr_consent: true } });
    expect(r.status).toBe(400);
    expect((await me(token)).body.user.gdpr_consent).toBeNull();
  });

  it('when a user exports their data, then it covers core and every installed module, without secrets', async () => {
    const { user, token } = await makeSession(t, { phone: '+34 600 000 000' });
    await t.request('PUT', '/auth/user/me', { session: token, body: { biz_name: 'Export Co' } });
    await putPrivacy(token, { privacy_region: 'UK' });
    await t.request('POST', '/auth/user/me/onboarding/complete', { session: token, body: { acquisition_source: 'secret-source-value' } });
    const r = await t.request('GET', '/auth/user/me/privacy/export', { session: token });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-disposition')).toMatch(/attachment/);
    expect(r.headers.get('cache-control')).toBe('no-store'); // app-wide, like every API answer
    const data = r.body.data;
    expect(data.user_id).toBe(user.id);
    expect(data.core.user).toMatchObject({ id: user.id, email: user.email, phone: '+34 600 000 000' });
    expect(data.core.user).not.toHaveProperty('password_hash');
    expect(data.core.sessions).toHaveLength(1);
    expect(data.core.sessions[0]).not.toHaveProperty('token_hash');
    expect(data.modules['ext-business']['business-profile']).toMatchObject({ biz_name: 'Export Co' });
    expect(data.modules.privacy.privacy.settings).toMatchObject({ privacy_region: 'UK' });
    expect(data.modules.onboarding.onboarding.write_only_fields_stored).toEqual(['acquisition_source']);
    expect(r.text).not.toContain('secret-source-value');
    expect(r.text).not.toMatch(/\$2[aby]\$/);
    expect(r.text).not.toContain(token);
  });

  it('when a user deletes their account, then the password is checked, data is erased everywhere and sessions die', async () => {
    const { user, token } = await makeSession(t, { name: 'Erase', phone: '+1 555 0100' });
    const other = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'other device' });
    await t.request('PUT', '/auth/user/me', { session: token, body: { biz_name: 'Gone Ltd' } });
    await putPrivacy(token, { gdpr_consent: true, gdpr_consent_version: 'v2' });
    await t.request('POST', '/auth/user/me/onboarding/complete', { session: token, body: { acquisition_source: 'ads' } });
    const uploaded = await t.request<any>('POST', '/auth/upload/picture', { session: token, raw: pictureForm(png()) });
    expect(uploaded.status).toBe(200);
    const pictureUrl: string = uploaded.body.data.user.picture;
    const pictureFile = path.join(t.app.services.pictures.dir, path.basename(new URL(pictureUrl).pathname));
    expect(existsSync(pictureFile)).toBe(true);

    expect((await t.request('POST', '/auth/user/me/privacy/delete', { session: token, body: {} })).status).toBe(400);
    expect((await t.request('POST', '/auth/user/me/privacy/delete', { session: token, body: { confirm: true } })).status).toBe(400);
    const wrong = await t.request('POST', '/auth/user/me/privacy/delete', { session: token, body: { confirm: true, password: 'wrong-password-1' } });
    expect(wrong.status).toBe(401);

    const r = await t.request('POST', '/auth/user/me/privacy/delete', { session: token, body: { confirm: true, password: DEFAULT_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body.data.erased).toEqual(expect.arrayContaining(['core', 'ext-business', 'privacy', 'onboarding']));
    expect((await t.request('GET', '/auth/validation', { session: token })).status).toBe(401);
    expect((await t.request('GET', '/auth/validation', { session: other.token })).status).toBe(401);

    const [rows] = await t.app.sequelize.query('SELECT * FROM users WHERE id = ?', { replacements: [user.id] });
    const row = (rows as Record<string, unknown>[])[0];
    expect(row).toMatchObject({ email: `deleted-${user.id}@invalid`, name: null, phone: null, password_hash: null, biz_name: null, gdpr_consent: null });
    expect(row.deleted_at).not.toBeNull();
    // PostgreSQL's search column (users.search_text) is generated from the erased fields: nothing of them stays searchable.
    if (BACKEND === 'pg') expect(String(row.search_text)).toBe(`deleted-${user.id}@invalid`.toLowerCase() + '\n\n\n');
    const [onb] = await t.app.sequelize.query('SELECT * FROM onboarding_profiles WHERE user_id = ?', { replacements: [user.id] });
    expect(onb).toEqual([]);
    const [events] = await t.app.sequelize.query('SELECT kind FROM privacy_consent_events WHERE user_id = ?', { replacements: [user.id] });
    expect(events).toEqual([{ kind: 'account_erased' }]);
    const [sessions] = await t.app.sequelize.query('SELECT id FROM sessions WHERE user_id = ?', { replacements: [user.id] });
    expect(sessions).toEqual([]);
    // The uploaded picture was personal data as well: the file is gone and its URL answers 404.
    expect(existsSync(pictureFile)).toBe(false);
    expect((await fetch(t.url + new URL(pictureUrl).pathname)).status).toBe(404);
  });

  it('when an admin exports or erases a user, then it works for users below superadmin only', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const root = await makeSession(t, { user_type: 'superadmin' });
    const customer = await makeSession(t, { name: 'Target' });
    const exp = await t.request('GET', `/auth/admin/users/${customer.user.id}/privacy/export`, { session: admin.token });
    expect(exp.headers.get('cache-control')).toBe('no-store');
    expect(exp.status).toBe(200);
    expect(exp.body.data.core.user.name).toBe('Target');
    expect((await t.request('GET', `/auth/admin/users/${root.user.id}/privacy/export`, { session: admin.token })).status).toBe(403);
    expect((await t.request('GET', `/auth/admin/users/${customer.user.id}/privacy/export`, { session: customer.token })).status).toBe(403);
    expect((await t.request('POST', `/auth/admin/users/${customer.user.id}/privacy/delete`, { session: admin.token, body: {} })).status).toBe(400);
    const del = await t.request('POST', `/auth/admin/users/${customer.user.id}/privacy/delete`, { session: admin.token, body: { confirm: true } });
    expect(del.status).toBe(200);
    expect((await t.request('GET', '/auth/validation', { session: customer.token })).status).toBe(401);
    expect((await t.request('GET', `/auth/admin/users/${customer.user.id}/privacy/export`, { session: admin.token })).status).toBe(404);
    const [events] = await t.app.sequelize.query('SELECT actor, actor_id FROM privacy_consent_events WHERE user_id = ?', { replacements: [customer.user.id] });
    expect(events).toEqual([{ actor: 'admin', actor_id: admin.user.id }]);
  });

  it('when a module was uninstalled keeping its data, then export and erasure still cover it', async () => {
    const { user, token } = await makeSession(t);
    await t.request('PUT', '/auth/user/me', { session: token, body: { biz_name: 'Lingering' } });
    await t.app.modules.hub.uninstall('ext-business');
    const exp = await t.request('GET', '/auth/user/me/privacy/export', { session: token });
    expect(exp.body.data.modules['ext-business']['business-profile'].biz_name).toBe('Lingering');
    await t.request('POST', '/auth/user/me/privacy/delete', { session: token, body: { confirm: true, password: DEFAULT_PASSWORD } });
    const [rows] = await t.app.sequelize.query('SELECT biz_name FROM users WHERE id = ?', { replacements: [user.id] });
    expect(rows).toEqual([{ biz_name: null }]);
  });
});

describe(`privacy changes at once (${BACKEND})`, () => {
  it('when the same change is sent twice at once, then the history records it once', async () => {
    if (!t.app.modules.isInstalled('privacy')) await t.app.modules.hub.install(['privacy']);
    for (let round = 0; round < 10; round++) {
      const { token } = await makeSession(t);
      const answers = await Promise.all([
        putPrivacy(token, { privacy_region: 'UK', ccpa_opt_out: true }),
        putPrivacy(token, { privacy_region: 'UK', ccpa_opt_out: true }),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const history = await t.request('GET', '/auth/user/me/privacy/history', { session: token });
      expect(history.body.data.events.map((e: { kind: string }) => e.kind).sort(), `round ${round}`).toEqual(['ccpa_opt_out', 'privacy_region_changed']);
    }
  });
});
