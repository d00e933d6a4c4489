import { beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../../test/helpers/backend.js';
import { DEFAULT_PASSWORD } from '../../test/helpers/factories.js';
import { addMember, eventsOf, makeOrg, O, person, refused, useApp } from './test/world.js';

/** The privacy module's export and erasure reach memberships (issue 53), with the last-owner rule. */
const app = useApp();
beforeAll(async () => {
  await app().app.modules.hub.install(['privacy']);
});

const erase = (token: string) => app().request('POST', '/auth/user/me/privacy/delete', { session: token, body: { confirm: true, password: DEFAULT_PASSWORD } });

describe(`organizations: export and erasure (${BACKEND})`, () => {
  it('when a member exports their data, then their memberships and invitations to their address are in it', async () => {
    const t = app();
    const owner = await person(t);
    const me = await person(t);
    const org = await makeOrg(t, owner, { name: 'Exported' });
    await addMember(t, org.id, me, 'admin');
    const r = await t.request('GET', '/auth/user/me/privacy/export', { session: me.token });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.modules.organizations.organizations).toEqual({
      memberships: [{ organization_id: org.id, slug: org.slug, name: 'Exported', role: 'admin', joined_at: expect.any(String) }],
      invitations: [],
    });
  });

  it('when the only owner of an organization with other members erases their account, then it is refused with a clear message and nothing changes', async () => {
    const t = app();
    const owner = await person(t);
    const member = await person(t);
    const org = await makeOrg(t, owner, { name: 'Kept' });
    await addMember(t, org.id, member, 'member');
    const r = await erase(owner.token);
    refused(r, 409, 'ORG_LAST_OWNER');
    expect(r.body.error).toContain(org.slug);
    expect((await t.request('GET', `${O}/${org.id}/members`, { session: owner.token })).body.data.members).toHaveLength(2);
  });

  it('when a member, a co-owner and a lone owner erase their accounts, then memberships go and the lone owner’s organization goes with them', async () => {
    const t = app();
    const owner = await person(t);
    const coOwner = await person(t);
    const member = await person(t);
    const shared = await makeOrg(t, owner);
    await addMember(t, shared.id, coOwner, 'owner');
    await addMember(t, shared.id, member, 'member');
    const alone = await makeOrg(t, member);
    expect((await erase(member.token)).status).toBe(200);
    expect((await erase(coOwner.token)).status).toBe(200);
    const left = await t.request('GET', `${O}/${shared.id}/members`, { session: owner.token });
    expect(left.body.data.members.map((m: { user_id: string }) => m.user_id)).toEqual([owner.user.id]);
    const [rows] = await t.app.sequelize.query('SELECT id FROM organizations WHERE id = ?', { replacements: [alone.id] });
    expect(rows).toEqual([]);
    expect((await eventsOf(t, 'organizations.deleted', alone.id))[0].details).toMatchObject({ reason: 'owner_erased' });
    expect((await eventsOf(t, 'organizations.member_removed', shared.id)).map((e) => e.details.reason)).toEqual(['erased', 'erased']);
  });
});
