import { describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { startTestApp, type TestResponse } from '../../test/helpers/test-app.js';
import { addMember, eventsOf, makeOrg, O, person, refused, useApp } from './test/world.js';

/** Organizations, their members and roles through the HTTP API (issue 53), on the backend of the run. */
const app = useApp();

describe(`organizations: create, read, change, delete (${BACKEND})`, () => {
  it('when a user creates an organization, then it is 201 with a slug from the name, the creator is its owner and it is audited', async () => {
    const t = app();
    const alice = await person(t);
    const r = await t.request('POST', O, { session: alice.token, body: { name: 'Ünïcode Widgets, Inc.' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const org = r.body.data.organization;
    expect(org).toMatchObject({ slug: 'unicode-widgets-inc', name: 'Ünïcode Widgets, Inc.', logo: null, metadata: {} });
    const mine = await t.request('GET', O, { session: alice.token });
    expect(mine.body.data.organizations).toEqual([expect.objectContaining({ id: org.id, role: 'owner' })]);
    expect((await eventsOf(t, 'organizations.created', org.id)).map((e) => e.user_id)).toEqual([alice.user.id]);
    // The same name again: the made-up slug gets a suffix; a chosen slug that is taken is 409.
    const again = await t.request('POST', O, { session: alice.token, body: { name: 'Ünïcode Widgets, Inc.' } });
    expect(again.status).toBe(201);
    expect(again.body.data.organization.slug).toMatch(/^unicode-widgets-inc-[0-9a-f]{6}$/);
    refused(await t.request('POST', O, { session: alice.token, body: { name: 'Other', slug: 'unicode-widgets-inc' } }), 409, 'ORG_SLUG_TAKEN');
  });

  it('when the name or slug is bad, or nobody is signed in, then it is refused and nothing is created', async () => {
    const t = app();
    const alice = await person(t);
    for (const body of [
      {},
      { name: '' },
      { name: 'x'.repeat(201) },
      { name: 'A', slug: 'A-Caps' },
      { name: 'A', slug: '-lead' },
      { name: 'A', slug: 'invitations' },
      { name: 'A', extra: 1 },
    ]) {
      refused(await t.request('POST', O, { session: alice.token, body }), 400, 'VALIDATION_ERROR');
    }
    expect((await t.request('POST', O, { body: { name: 'A' } })).status).toBe(401);
    expect((await t.request('GET', O, { session: alice.token })).body.data.organizations).toEqual([]);
  });

  it('when ORGANIZATIONS_CREATE=admin, then a customer gets 403 ORG_FORBIDDEN and an admin may create', async () => {
    const t2 = await startTestApp({ env: { ORGANIZATIONS_CREATE: 'admin' } });
    try {
      await t2.app.modules.hub.install(['organizations']);
      const customer = await person(t2);
      refused(await t2.request('POST', O, { session: customer.token, body: { name: 'Nope' } }), 403, 'ORG_FORBIDDEN');
      const admin = await person(t2, { user_type: 'admin' });
      expect((await t2.request('POST', O, { session: admin.token, body: { name: 'Yes' } })).status).toBe(201);
    } finally {
      await t2.close();
    }
  });

  it('when a non-member asks for an organization that exists and one that does not, then both answers are the same 403; a superadmin gets 404 for the missing one', async () => {
    const t = app();
    const org = await makeOrg(t, await person(t));
    const stranger = await person(t);
    const there = await t.request('GET', `${O}/${org.id}`, { session: stranger.token });
    const missing = await t.request('GET', `${O}/no-such-org-here`, { session: stranger.token });
    refused(there, 403, 'ORG_FORBIDDEN');
    expect(missing.body).toEqual(there.body);
    expect(missing.status).toBe(there.status);
    for (const [m, p] of [
      ['PATCH', ''],
      ['DELETE', ''],
      ['GET', '/members'],
      ['GET', '/roles'],
      ['POST', '/roles'],
      ['DELETE', `/members/${stranger.user.id}`],
    ] as const) {
      refused(
        await t.request(m, `${O}/${org.slug}${p}`, {
          session: stranger.token,
          body: m === 'PATCH' ? { name: 'x' } : m === 'POST' ? { name: 'r', permissions: [] } : undefined,
        }),
        403,
        'ORG_FORBIDDEN',
      );
    }
    const boss = await person(t, { user_type: 'superadmin' });
    refused(await t.request('GET', `${O}/no-such-org-here`, { session: boss.token }), 404, 'ORG_NOT_FOUND');
    const seen = await t.request('GET', `${O}/${org.slug}`, { session: boss.token });
    expect(seen.body.data.organization).toMatchObject({ id: org.id, role: null });
  });

  it('when members change the organization, then org:update decides (owner and admin yes, member no), by id or slug, and a taken slug is 409', async () => {
    const t = app();
    const owner = await person(t);
    const org = await makeOrg(t, owner);
    const other = await makeOrg(t, owner);
    const admin = await person(t);
    const member = await person(t);
    await addMember(t, org.id, admin, 'admin');
    await addMember(t, org.id, member, 'member');
    refused(await t.request('PATCH', `${O}/${org.id}`, { session: member.token, body: { name: 'Mine now' } }), 403, 'ORG_FORBIDDEN');
    const r = await t.request('PATCH', `${O}/${org.slug}`, {
      session: admin.token,
      body: { name: 'Renamed', logo: 'https://cdn.example.test/l.png', metadata: { plan: 'pro' } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.organization).toMatchObject({ name: 'Renamed', logo: 'https://cdn.example.test/l.png', metadata: { plan: 'pro' } });
    refused(await t.request('PATCH', `${O}/${org.id}`, { session: owner.token, body: { slug: other.slug } }), 409, 'ORG_SLUG_TAKEN');
    refused(await t.request('PATCH', `${O}/${org.id}`, { session: owner.token, body: { logo: 'javascript:alert(1)' } }), 400, 'VALIDATION_ERROR');
    refused(await t.request('PATCH', `${O}/${org.id}`, { session: owner.token, body: {} }), 400, 'VALIDATION_ERROR');
    const moved = await t.request('PATCH', `${O}/${org.id}`, { session: owner.token, body: { slug: `${org.slug}-x` } });
    expect(moved.body.data.organization.slug).toBe(`${org.slug}-x`);
    expect((await t.request('GET', `${O}/${org.slug}-x`, { session: member.token })).body.data.organization).toMatchObject({ name: 'Renamed', role: 'member' });
    expect((await eventsOf(t, 'organizations.updated', org.id)).length).toBe(2);
  });

  it('when an admin and then the owner delete the organization, then org:delete decides, and its members and roles go with it', async () => {
    const t = app();
    const owner = await person(t);
    const admin = await person(t);
    const org = await makeOrg(t, owner);
    await addMember(t, org.id, admin, 'admin');
    expect((await t.request('POST', `${O}/${org.id}/roles`, { session: owner.token, body: { name: 'billing', permissions: ['invoices:read'] } })).status).toBe(
      201,
    );
    refused(await t.request('DELETE', `${O}/${org.id}`, { session: admin.token }), 403, 'ORG_FORBIDDEN');
    const r = await t.request('DELETE', `${O}/${org.id}`, { session: owner.token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    refused(await t.request('GET', `${O}/${org.id}`, { session: owner.token }), 403, 'ORG_FORBIDDEN');
    for (const table of ['organization_members', 'organization_roles']) {
      const [rows] = await t.app.sequelize.query(`SELECT id FROM ${table} WHERE organization_id = ?`, { replacements: [org.id] });
      expect(rows, table).toEqual([]);
    }
    expect((await eventsOf(t, 'organizations.deleted', org.id))[0].details).toMatchObject({ slug: org.slug, members: 2 });
  });

  it('when a user is in more organizations than a page, then GET /auth/organizations pages with next_cursor, and a bad cursor or limit is 400', async () => {
    const t = app();
    const alice = await person(t);
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await makeOrg(t, alice)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: TestResponse = await t.request('GET', `${O}?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { session: alice.token });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.organizations.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.organizations.map((o: { id: string }) => o.id));
      cursor = r.body.data.next_cursor;
    } while (cursor);
    expect(seen).toEqual(made);
    refused(await t.request('GET', `${O}?cursor=bm90LWFuLWlk`, { session: alice.token }), 400, 'VALIDATION_ERROR');
    refused(await t.request('GET', `${O}?limit=201`, { session: alice.token }), 400, 'VALIDATION_ERROR');
  });
});

describe(`organizations: superadmins (${BACKEND})`, () => {
  it('when a superadmin who is no member acts on an organization, then they may do what an owner may', async () => {
    const t = app();
    const owner = await person(t);
    const member = await person(t);
    const org = await makeOrg(t, owner);
    await addMember(t, org.id, member, 'member');
    const boss = await person(t, { user_type: 'superadmin' });
    expect((await t.request('PATCH', `${O}/${org.id}`, { session: boss.token, body: { name: 'By the boss' } })).status).toBe(200);
    const promoted = await t.request('PATCH', `${O}/${org.id}/members/${member.user.id}`, { session: boss.token, body: { role: 'owner' } });
    expect(promoted.body.data.member).toMatchObject({ role: 'owner' });
    expect((await t.request('GET', `${O}/${org.id}/members`, { session: boss.token })).body.data.members).toHaveLength(2);
    expect((await t.request('DELETE', `${O}/${org.id}`, { session: boss.token })).status).toBe(200);
  });
});

describe(`organizations: the admin list (${BACKEND})`, () => {
  it('when an admin searches the organizations, then name (any case) and slug match, newest first, paged, with member counts; a customer gets 403', async () => {
    const t = app();
    const owner = await person(t);
    const tag = `zq${Date.now().toString(36)}`;
    const a = await makeOrg(t, owner, { name: `Alpha ${tag.toUpperCase()}` });
    const b = await makeOrg(t, owner, { name: 'Beta', slug: `beta-${tag}` });
    const c = await makeOrg(t, owner, { name: `Gamma ${tag}` });
    await addMember(t, b.id, await person(t), 'member');
    await makeOrg(t, owner, { name: 'Unrelated 100%_' });
    const admin = await person(t, { user_type: 'admin' });
    const first = await t.request('GET', `/auth/admin/organizations?q=${tag}&limit=2`, { session: admin.token });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.organizations.map((o: { id: string }) => o.id)).toEqual([c.id, b.id]);
    expect(first.body.data.organizations[1]).toMatchObject({ slug: `beta-${tag}`, member_count: 2 });
    const rest = await t.request('GET', `/auth/admin/organizations?q=${tag}&limit=2&cursor=${first.body.data.next_cursor}`, { session: admin.token });
    expect(rest.body.data).toMatchObject({ organizations: [expect.objectContaining({ id: a.id, member_count: 1 })], next_cursor: null });
    // LIKE's wildcards in the search are plain characters.
    expect(
      (await t.request('GET', '/auth/admin/organizations?q=%25_', { session: admin.token })).body.data.organizations.map((o: { name: string }) => o.name),
    ).toEqual(['Unrelated 100%_']);
    const one = await t.request('GET', `/auth/admin/organizations/${b.slug}`, { session: admin.token });
    expect(one.body.data.organization).toMatchObject({ id: b.id, member_count: 2, owners: [{ user_id: owner.user.id, email: owner.user.email }] });
    refused(await t.request('GET', '/auth/admin/organizations/no-such-org', { session: admin.token }), 404, 'ORG_NOT_FOUND');
    expect((await t.request('GET', '/auth/admin/organizations', { session: owner.token })).status).toBe(403);
    refused(await t.request('GET', '/auth/admin/organizations?limit=0', { session: admin.token }), 400, 'VALIDATION_ERROR');
  });
});
