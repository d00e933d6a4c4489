import { describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { addMember, eventsOf, makeOrg, O, person, refused, useApp, type Person } from './test/world.js';

/** Members and roles: who may change whom, the last owner, custom roles (issue 53). */
const app = useApp();

const owners = async (orgId: string) => {
  const [rows] = await app().app.sequelize.query("SELECT user_id FROM organization_members WHERE organization_id = ? AND role = 'owner'", {
    replacements: [orgId],
  });
  return rows.length;
};

describe(`organizations: members (${BACKEND})`, () => {
  it('when a member lists the members, then each has user_id, email, name, role and joined_at, in joining order, paged with next_cursor', async () => {
    const t = app();
    const owner = await person(t, { name: 'Olga' });
    const org = await makeOrg(t, owner);
    const others: Person[] = [];
    for (let i = 0; i < 3; i++) {
      others.push(await person(t));
      await addMember(t, org.id, others[i], 'member');
    }
    const first = await t.request('GET', `${O}/${org.id}/members?limit=2`, { session: others[0].token });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.members[0]).toEqual({ user_id: owner.user.id, email: owner.user.email, name: 'Olga', role: 'owner', joined_at: expect.any(String) });
    const second = await t.request('GET', `${O}/${org.id}/members?limit=2&cursor=${first.body.data.next_cursor}`, { session: others[0].token });
    expect(second.body.data.next_cursor).toBeNull();
    expect([...first.body.data.members, ...second.body.data.members].map((m: { user_id: string }) => m.user_id)).toEqual([
      owner.user.id,
      ...others.map((o) => o.user.id),
    ]);
  });

  it('when roles are changed, then members:update_role decides, only owners deal in owner, and an unknown role or member is refused', async () => {
    const t = app();
    const owner = await person(t);
    const admin = await person(t);
    const member = await person(t);
    const org = await makeOrg(t, owner);
    await addMember(t, org.id, admin, 'admin');
    await addMember(t, org.id, member, 'member');
    const patch = (who: Person, target: Person, role: string) =>
      t.request('PATCH', `${O}/${org.id}/members/${target.user.id}`, { session: who.token, body: { role } });
    refused(await patch(member, admin, 'member'), 403, 'ORG_FORBIDDEN');
    refused(await patch(admin, member, 'owner'), 403, 'ORG_FORBIDDEN');
    refused(await patch(admin, owner, 'member'), 403, 'ORG_FORBIDDEN');
    refused(await patch(admin, member, 'wizard'), 400, 'VALIDATION_ERROR');
    refused(await patch(admin, member, 'Bad Role'), 400, 'VALIDATION_ERROR');
    refused(
      await t.request('PATCH', `${O}/${org.id}/members/${crypto.randomUUID()}`, { session: admin.token, body: { role: 'member' } }),
      404,
      'ORG_MEMBER_NOT_FOUND',
    );
    const r = await patch(admin, member, 'admin');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.member).toMatchObject({ user_id: member.user.id, role: 'admin' });
    expect((await patch(owner, member, 'owner')).status).toBe(200);
    const changes = await eventsOf(t, 'organizations.member_role_changed', org.id);
    expect(changes.map((e) => [e.user_id, e.details.role, e.details.previous_role])).toEqual(
      expect.arrayContaining([
        [member.user.id, 'admin', 'member'],
        [member.user.id, 'owner', 'admin'],
      ]),
    );
  });

  it('when the only owner demotes, removes or lets themselves leave, then it is 409 ORG_LAST_OWNER; with a second owner it works', async () => {
    const t = app();
    const owner = await person(t);
    const second = await person(t);
    const org = await makeOrg(t, owner);
    await addMember(t, org.id, second, 'admin');
    refused(await t.request('PATCH', `${O}/${org.id}/members/${owner.user.id}`, { session: owner.token, body: { role: 'admin' } }), 409, 'ORG_LAST_OWNER');
    refused(await t.request('DELETE', `${O}/${org.id}/members/${owner.user.id}`, { session: owner.token }), 409, 'ORG_LAST_OWNER');
    expect((await t.request('PATCH', `${O}/${org.id}/members/${second.user.id}`, { session: owner.token, body: { role: 'owner' } })).status).toBe(200);
    const left = await t.request('DELETE', `${O}/${org.id}/members/${owner.user.id}`, { session: owner.token });
    expect(left.body.data.member).toEqual({ user_id: owner.user.id, removed: true, left: true });
    refused(await t.request('GET', `${O}/${org.id}`, { session: owner.token }), 403, 'ORG_FORBIDDEN');
    expect(await owners(org.id)).toBe(1);
    expect((await eventsOf(t, 'organizations.member_removed', org.id))[0]).toMatchObject({ user_id: owner.user.id, details: { left: true, role: 'owner' } });
  });

  it('when members are removed, then members:remove decides, a member may leave, and an admin may not remove an owner', async () => {
    const t = app();
    const owner = await person(t);
    const admin = await person(t);
    const a = await person(t);
    const b = await person(t);
    const org = await makeOrg(t, owner);
    await addMember(t, org.id, admin, 'admin');
    await addMember(t, org.id, a, 'member');
    await addMember(t, org.id, b, 'member');
    refused(await t.request('DELETE', `${O}/${org.id}/members/${b.user.id}`, { session: a.token }), 403, 'ORG_FORBIDDEN');
    refused(await t.request('DELETE', `${O}/${org.id}/members/${owner.user.id}`, { session: admin.token }), 403, 'ORG_FORBIDDEN');
    expect((await t.request('DELETE', `${O}/${org.id}/members/${a.user.id}`, { session: a.token })).status).toBe(200);
    expect((await t.request('DELETE', `${O}/${org.id}/members/${b.user.id}`, { session: admin.token })).status).toBe(200);
    refused(await t.request('DELETE', `${O}/${org.id}/members/${b.user.id}`, { session: admin.token }), 404, 'ORG_MEMBER_NOT_FOUND');
    const list = await t.request('GET', `${O}/${org.id}/members`, { session: owner.token });
    expect(list.body.data.members.map((m: { user_id: string }) => m.user_id).sort()).toEqual([owner.user.id, admin.user.id].sort());
  });

  it('when two owners each demote or remove the other at the same moment, then exactly one succeeds and one owner is left (five rounds)', async () => {
    const t = app();
    for (let round = 0; round < 5; round++) {
      const x = await person(t);
      const y = await person(t);
      const org = await makeOrg(t, x);
      await addMember(t, org.id, y, 'owner');
      const [first, second] =
        round % 2
          ? [
              t.request('PATCH', `${O}/${org.id}/members/${y.user.id}`, { session: x.token, body: { role: 'member' } }),
              t.request('PATCH', `${O}/${org.id}/members/${x.user.id}`, { session: y.token, body: { role: 'admin' } }),
            ]
          : [
              t.request('DELETE', `${O}/${org.id}/members/${x.user.id}`, { session: x.token }),
              t.request('DELETE', `${O}/${org.id}/members/${y.user.id}`, { session: y.token }),
            ];
      const answers = await Promise.all([first, second]);
      expect(answers.map((r) => r.status).sort(), JSON.stringify(answers.map((r) => r.body))).toEqual([200, 409]);
      expect(answers.find((r) => r.status === 409)?.body.code).toBe('ORG_LAST_OWNER');
      expect(await owners(org.id)).toBe(1);
    }
  });
});

describe(`organizations: roles (${BACKEND})`, () => {
  it('when an owner adds a custom role, then members with it get exactly its permissions, and the role list shows built-in and own roles', async () => {
    const t = app();
    const owner = await person(t);
    const editor = await person(t);
    const org = await makeOrg(t, owner);
    const created = await t.request('POST', `${O}/${org.id}/roles`, { session: owner.token, body: { name: 'editor', permissions: ['org:update', 'posts:*'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.role).toMatchObject({ name: 'editor', built_in: false, permissions: ['org:update', 'posts:*'] });
    await addMember(t, org.id, editor, 'editor');
    expect((await t.request('PATCH', `${O}/${org.id}`, { session: editor.token, body: { name: 'Edited' } })).status).toBe(200);
    refused(await t.request('DELETE', `${O}/${org.id}/members/${owner.user.id}`, { session: editor.token }), 403, 'ORG_FORBIDDEN');
    refused(await t.request('POST', `${O}/${org.id}/roles`, { session: editor.token, body: { name: 'x', permissions: [] } }), 403, 'ORG_FORBIDDEN');
    const list = await t.request('GET', `${O}/${org.id}/roles`, { session: editor.token });
    expect(list.body.data.roles.map((r: { name: string; permissions: string[] }) => [r.name, r.permissions])).toEqual([
      ['owner', ['org:update', 'org:delete', 'members:invite', 'members:remove', 'members:update_role', 'roles:manage', 'domains:manage']],
      ['admin', ['org:update', 'members:invite', 'members:remove', 'members:update_role', 'roles:manage', 'domains:manage']],
      ['member', []],
      ['editor', ['org:update', 'posts:*']],
    ]);
    expect((await eventsOf(t, 'organizations.role_created', org.id)).length).toBe(1);
  });

  it('when roles are managed wrongly, then a duplicate, a built-in, a role in use, a bad permission and a grant above the caller are each refused', async () => {
    const t = app();
    const owner = await person(t);
    const admin = await person(t);
    const org = await makeOrg(t, owner);
    await addMember(t, org.id, admin, 'admin');
    const R = `${O}/${org.id}/roles`;
    expect((await t.request('POST', R, { session: admin.token, body: { name: 'support', permissions: ['tickets:read'] } })).status).toBe(201);
    refused(await t.request('POST', R, { session: admin.token, body: { name: 'support', permissions: [] } }), 409, 'ORG_ROLE_EXISTS');
    refused(await t.request('POST', R, { session: admin.token, body: { name: 'admin', permissions: [] } }), 409, 'ORG_ROLE_EXISTS');
    refused(await t.request('PATCH', `${R}/admin`, { session: owner.token, body: { permissions: [] } }), 409, 'ORG_ROLE_BUILT_IN');
    refused(await t.request('DELETE', `${R}/member`, { session: owner.token }), 409, 'ORG_ROLE_BUILT_IN');
    refused(await t.request('PATCH', `${R}/nope`, { session: owner.token, body: { permissions: [] } }), 404, 'ORG_ROLE_NOT_FOUND');
    for (const permissions of [['Tickets:read'], ['tickets'], ['*:read'], 'tickets:read']) {
      refused(await t.request('POST', R, { session: owner.token, body: { name: 'bad', permissions } }), 400, 'VALIDATION_ERROR');
    }
    // An admin lacks org:delete: no role of theirs may grant it, directly or through a wildcard.
    refused(await t.request('POST', R, { session: admin.token, body: { name: 'deleter', permissions: ['org:delete'] } }), 403, 'ORG_FORBIDDEN');
    refused(await t.request('POST', R, { session: admin.token, body: { name: 'deleter', permissions: ['org:*'] } }), 403, 'ORG_FORBIDDEN');
    expect((await t.request('POST', R, { session: owner.token, body: { name: 'deleter', permissions: ['org:delete'] } })).status).toBe(201);
    refused(await t.request('DELETE', `${R}/deleter`, { session: admin.token }), 403, 'ORG_FORBIDDEN');

    const helper = await person(t);
    await addMember(t, org.id, helper, 'support');
    refused(await t.request('DELETE', `${R}/support`, { session: owner.token }), 409, 'ORG_ROLE_IN_USE');
    const updated = await t.request('PATCH', `${R}/support`, { session: admin.token, body: { permissions: ['tickets:read', 'tickets:write'] } });
    expect(updated.body.data.role.permissions).toEqual(['tickets:read', 'tickets:write']);
    expect((await t.request('PATCH', `${O}/${org.id}/members/${helper.user.id}`, { session: admin.token, body: { role: 'member' } })).status).toBe(200);
    expect((await t.request('DELETE', `${R}/support`, { session: owner.token })).status).toBe(200);
    refused(await t.request('PATCH', `${O}/${org.id}/members/${helper.user.id}`, { session: admin.token, body: { role: 'support' } }), 400, 'VALIDATION_ERROR');
  });
});
