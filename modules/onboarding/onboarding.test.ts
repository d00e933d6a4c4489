import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession, uniqueEmail } from '../../test/helpers/factories.js';
import { startTestApp, type TestApp } from '../../test/helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.modules.hub.install(['onboarding']);
});
afterAll(async () => {
  await t?.close();
});

const marker = (tag: string) => `${tag}-${randomBytes(6).toString('hex')}`;

/** Every key of every object in a JSON value. */
function keysOf(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) keysOf(x, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      keysOf(x, out);
    }
  }
  return out;
}

describe(`onboarding (${BACKEND})`, () => {
  it('when the first run is completed, then first_time turns false and the acquisition data is stored', async () => {
    const { user, token } = await makeSession(t);
    const r = await t.request('POST', '/auth/user/me/onboarding/complete', {
      session: token,
      body: { acquisition_source: 'google', acquisition_medium: 'cpc', acquisition_campaign: 'launch', acquisition_term: 'auth', team_size_range: '11-50' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { user: { id: user.id, first_time: false } } });
    expect(keysOf(r.body).filter((k) => k.startsWith('acquisition_') || k === 'team_size_range')).toEqual([]);
    const [rows] = await t.app.sequelize.query(
      'SELECT acquisition_source, team_size_range, acquisition_extra, status FROM onboarding_profiles WHERE user_id = ?',
      {
        replacements: [user.id],
      },
    );
    const row = (rows as Record<string, unknown>[])[0];
    expect(row).toMatchObject({ acquisition_source: 'google', team_size_range: '11-50', status: 'completed' });
    expect(JSON.stringify(row.acquisition_extra)).toContain('auth');
  });

  it('when acquisition data is stored, then no read of any route returns it', async () => {
    await t.app.modules.hub.install(['privacy', 'ext-business']);
    const { user, token } = await makeSession(t, { user_type: 'admin' });
    const secrets = {
      acquisition_source: marker('src'),
      acquisition_details: marker('details'),
      acquisition_utm_content: marker('content'),
      team_size_range: '500+',
    };
    expect((await t.request('POST', '/auth/user/me/onboarding/complete', { session: token, body: secrets })).status).toBe(200);
    const step = await t.request('POST', '/api/v1/onboarding/steps/profile/complete', {
      session: token,
      body: { data: { acquisition_referrer: marker('ref'), color: 'blue' } },
    });
    expect(step.status).toBe(200);

    const reads: [string, string, Record<string, unknown>][] = [
      ['GET', '/auth/user/me', { bridge: true }],
      ['GET', '/auth/me', {}],
      ['GET', '/auth/validation', {}],
      ['GET', '/auth/session/current', {}],
      ['POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } }],
      ['GET', `/auth/admin/users/${user.id}`, {}],
      ['GET', `/auth/admin/users?q=${encodeURIComponent(user.email)}`, {}],
      ['GET', `/auth/users/${user.id}`, {}],
      ['GET', '/api/v1/onboarding', {}],
      ['GET', '/auth/user/me/privacy', {}],
      ['GET', '/auth/user/me/privacy/history', {}],
      ['GET', '/auth/user/me/privacy/export', {}],
    ];
    for (const [method, path, opts] of reads) {
      const r = await t.request(method, path, { session: token, ...opts });
      expect(r.status, `${method} ${path}`).toBeLessThan(300);
      for (const value of Object.values(secrets)) expect(r.text, `${method} ${path}`).not.toContain(value);
      expect(r.text).not.toContain('acquisition_referrer":');
      expect(
        keysOf(r.body).filter((k) => k.startsWith('acquisition_') || k === 'team_size_range'),
        `${method} ${path}`,
      ).toEqual([]);
    }
    const state = await t.request('GET', '/api/v1/onboarding', { session: token });
    expect(state.body.data.data.profile).toEqual({ color: 'blue' });
    await t.app.modules.hub.uninstall('privacy');
    await t.app.modules.hub.uninstall('ext-business');
  });

  it('when business or unknown fields are sent, then they need ext-business, and unknown ones are refused', async () => {
    const { token } = await makeSession(t);
    const complete = (body: unknown) => t.request('POST', '/auth/user/me/onboarding/complete', { session: token, body });
    const biz = await complete({ is_business: true, biz_name: 'Acme' });
    expect(biz.status).toBe(400);
    expect(biz.body.code).toBe('module_not_installed');
    expect((await complete({ favourite: 'x' })).status).toBe(400);
    expect((await complete({ gdpr_consent: true })).status).toBe(400);
    expect((await complete({ acquisition_source: 'a'.repeat(201) })).status).toBe(400);

    await t.app.modules.hub.install(['ext-business']);
    const ok = await complete({ is_business: true, biz_name: 'Acme', biz_country: 'de', acquisition_source: 'newsletter' });
    expect(ok.status).toBe(200);
    expect(ok.body.data.user).toMatchObject({ is_business: true, biz_name: 'Acme', biz_country: 'DE', first_time: false });
    expect((await complete({ biz_country: 'ZZ' })).status).toBe(400);
    await t.app.modules.hub.uninstall('ext-business');
  });

  it('when a user walks through the steps, then the state follows in the module envelope and the last step completes it', async () => {
    const { user, token } = await makeSession(t);
    const call = (method: string, path: string, body?: unknown) => t.request(method, `/api/v1/onboarding${path}`, { session: token, body });
    const initial = await call('GET', '');
    expect(initial.status).toBe(200);
    expect(initial.body).toMatchObject({ success: true, user_context: { authenticated: true, user_type: 'customer' }, meta: {} });
    // Without ext-business there is no business step.
    expect(initial.body.data).toMatchObject({
      user_id: user.id,
      status: 'not_started',
      step: 'profile',
      completed: false,
      steps: ['profile', 'preferences', 'done'],
    });

    const started = await call('POST', '/start');
    expect(started.body.data).toMatchObject({ status: 'in_progress', step: 'profile' });
    expect(started.body.data.id).toEqual(expect.any(String));
    const profile = await call('POST', '/steps/profile/complete', { data: { nickname: 'Ana' } });
    expect(profile.body.data).toMatchObject({ step: 'preferences', completed_steps: ['profile'], data: { profile: { nickname: 'Ana' } } });
    const skipped = await call('POST', '/steps/preferences/skip');
    expect(skipped.body.data).toMatchObject({ step: 'done', skipped_steps: ['preferences'] });
    const unknown = await call('POST', '/steps/billing/complete', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('ONBOARDING_STEP_NOT_FOUND');
    const done = await call('POST', '/steps/done/complete', {});
    expect(done.body.data).toMatchObject({ status: 'completed', completed: true, step: null });
    expect(done.body.data.completed_at).toEqual(expect.any(String));
    const me = await t.request('GET', '/auth/user/me', { session: token, bridge: true });
    expect(me.body.user.first_time).toBe(false);
  });

  it('when two steps are completed at once, then neither is lost', async () => {
    for (let round = 0; round < 10; round++) {
      const { token } = await makeSession(t);
      const step = (name: string) => t.request('POST', `/api/v1/onboarding/steps/${name}/complete`, { session: token, body: { data: { [name]: round } } });
      const answers = await Promise.all([step('profile'), step('preferences')]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const state = (await t.request('GET', '/api/v1/onboarding', { session: token })).body.data;
      expect([...state.completed_steps].sort(), `round ${round}`).toEqual(['preferences', 'profile']);
      expect(state).toMatchObject({ step: 'done', data: { profile: { profile: round }, preferences: { preferences: round } } });
    }
  });

  it('when /api/v1/onboarding/complete is called, then it completes at once and answers with the state', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('POST', '/api/v1/onboarding/complete', { session: token, body: { team_size_range: '1-10' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'completed', completed: true });
    expect(r.body.meta.user.first_time).toBe(false);
    // The answer echoes nothing of the request body (a bare substring test could meet '1-10' inside a UUID).
    expect(r.text).not.toContain('team_size_range');
    expect(r.text).not.toContain('"1-10"');
  });

  it('when the steps are configured, then the state uses them', async () => {
    await t.app.modules.hub.uninstall('onboarding');
    await t.app.modules.hub.install(['onboarding'], { config: { onboarding: { steps: ['welcome', 'team', 'done'] } } });
    const { token } = await makeSession(t);
    const r = await t.request('GET', '/api/v1/onboarding', { session: token });
    expect(r.body.data).toMatchObject({ steps: ['welcome', 'team', 'done'], step: 'welcome' });
  });

  it('when someone registers, then an onboarding state exists for them from the start', async () => {
    const email = uniqueEmail('onb');
    const reg = await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD, name: 'New' }, bridge: true });
    expect(reg.status).toBe(200);
    const user = await t.app.repos.users.findByEmail(email);
    const [rows] = await t.app.sequelize.query('SELECT status FROM onboarding_profiles WHERE user_id = ?', { replacements: [user!.id] });
    expect(rows).toEqual([{ status: 'not_started' }]);
  });

  it('when there is no session, then the onboarding routes answer 401', async () => {
    expect((await t.request('GET', '/api/v1/onboarding')).status).toBe(401);
    expect((await t.request('POST', '/auth/user/me/onboarding/complete', { body: {} })).status).toBe(401);
  });
});
