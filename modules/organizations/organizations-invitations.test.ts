import { describe, expect, it } from 'vitest';
import { appWithMail } from '../../test/helpers/app-with-mail.js';
import { BACKEND } from '../../test/helpers/backend.js';
import { makeSession, uniqueEmail } from '../../test/helpers/factories.js';
import { startTestApp } from '../../test/helpers/test-app.js';
import { addMember, eventsOf, inviteMailOf, makeOrg, O, person, refused, type Person } from './test/world.js';

/** Invitations by email (issue 53): the mail's link, single use under concurrency, the refusals, the limits. */
const { t, smtp } = appWithMail({
  env: { RATE_LIMIT_ORGANIZATIONS_INVITE: '5/1h', RATE_LIMIT_ORGANIZATIONS_ACCEPT: '100/1m', PUBLIC_URL: 'https://auth.example.test' },
});

let installed = false;
async function ready() {
  if (!installed) await t.app.modules.hub.install(['organizations']);
  installed = true;
}

const inviteMail = (owner: Person, orgId: string, email: string, role = 'member') => inviteMailOf(t, smtp, owner, orgId, email, role);

const accept = (who: Person, token: string) => t.request('POST', `${O}/invitations/accept`, { session: who.token, body: { token } });

describe(`organizations: invitations (${BACKEND})`, () => {
  it('when an admin invites an email, then a mail with the link goes out, the token is stored hashed, and the invited user joins with the role', async () => {
    await ready();
    const owner = await person(t, { name: 'Olga' });
    const org = await makeOrg(t, owner, { name: 'Widgets & Co' });
    const email = uniqueEmail('invitee');
    const { invitation, token, mail } = await inviteMail(owner, org.id, email, 'admin');
    expect(invitation).toEqual({
      id: expect.any(String),
      email,
      role: 'admin',
      invited_by: owner.user.id,
      expires_at: expect.any(String),
      created_at: expect.any(String),
    });
    expect(new Date(invitation.expires_at).getTime() - Date.now()).toBeGreaterThan(6.9 * 86400_000);
    expect(mail.subject).toContain('Widgets & Co');
    expect(mail.text).toContain(`https://auth.example.test/invitations/${token}`);
    expect(mail.html).toContain('Widgets &amp; Co');
    const [row] = (await t.app.sequelize.query('SELECT token_hash FROM organization_invitations WHERE id = ?', { replacements: [invitation.id] }))[0] as {
      token_hash: string;
    }[];
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.token_hash).not.toContain(token);
    const listed = await t.request('GET', `${O}/${org.id}/invitations`, { session: owner.token });
    expect(listed.body.data.invitations.map((i: { id: string }) => i.id)).toEqual([invitation.id]);

    const invitee = await makeSession(t, { email });
    const r = await accept(invitee, token);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toEqual({ organization: { id: org.id, slug: org.slug, name: 'Widgets & Co' }, role: 'admin' });
    const mine = await t.request('GET', O, { session: invitee.token });
    expect(mine.body.data.organizations).toEqual([expect.objectContaining({ id: org.id, role: 'admin' })]);
    refused(await accept(invitee, token), 400, 'ORG_INVITATION_INVALID');
    expect((await t.request('GET', `${O}/${org.id}/invitations`, { session: owner.token })).body.data.invitations).toEqual([]);
    expect((await eventsOf(t, 'organizations.invitation_accepted', org.id)).map((e) => e.user_id)).toEqual([invitee.user.id]);
    expect((await eventsOf(t, 'organizations.member_added', org.id)).map((e) => e.details.via).sort()).toEqual(['created', 'invitation']);
  });

  it('when ten accepts of one invitation arrive at once, then exactly one joins and the others are 400 ORG_INVITATION_INVALID', async () => {
    await ready();
    const owner = await person(t);
    const org = await makeOrg(t, owner);
    const email = uniqueEmail('race');
    const { token } = await inviteMail(owner, org.id, email);
    const invitee = await makeSession(t, { email });
    const answers = await Promise.all(Array.from({ length: 10 }, () => accept(invitee, token)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 200)) refused(r, 400, 'ORG_INVITATION_INVALID');
    const [rows] = await t.app.sequelize.query('SELECT id FROM organization_members WHERE organization_id = ? AND user_id = ?', {
      replacements: [org.id, invitee.user.id],
    });
    expect(rows).toHaveLength(1);
    expect(await eventsOf(t, 'organizations.invitation_accepted', org.id)).toHaveLength(1);
  });

  it('when another user, an unverified one, a revoked, an expired or a made-up token accepts, then each is refused and nobody joins', async () => {
    await ready();
    const owner = await person(t);
    const org = await makeOrg(t, owner);
    const email = uniqueEmail('right');
    const { token, invitation } = await inviteMail(owner, org.id, email);
    refused(await accept(await person(t), token), 403, 'ORG_INVITATION_MISMATCH');
    refused(await accept(await makeSession(t, { email, is_verified: false }), token), 403, 'ORG_INVITATION_MISMATCH');
    refused(await accept(owner, 'orginv_not-a-real-token-at-all'), 400, 'ORG_INVITATION_INVALID');
    refused(await accept(owner, 'anything'), 400, 'ORG_INVITATION_INVALID');
    refused(await t.request('POST', `${O}/invitations/accept`, { session: owner.token, body: {} }), 400, 'VALIDATION_ERROR');
    expect((await t.request('POST', `${O}/invitations/accept`, { body: { token } })).status).toBe(401);

    const revoked = await t.request('DELETE', `${O}/${org.id}/invitations/${invitation.id}`, { session: owner.token });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    refused(await t.request('DELETE', `${O}/${org.id}/invitations/${invitation.id}`, { session: owner.token }), 404, 'ORG_INVITATION_NOT_FOUND');
    const other = await person(t, { email: uniqueEmail('x') });
    refused(await accept(other, token), 400, 'ORG_INVITATION_INVALID');

    const late = uniqueEmail('late');
    const expired = await inviteMail(owner, org.id, late);
    await t.app.sequelize.query('UPDATE organization_invitations SET expires_at = ? WHERE id = ?', {
      replacements: [new Date(Date.now() - 1000), expired.invitation.id],
    });
    refused(await accept(await makeSession(t, { email: late }), expired.token), 400, 'ORG_INVITATION_INVALID');
    expect((await t.request('GET', `${O}/${org.id}/members`, { session: owner.token })).body.data.members).toHaveLength(1);
    expect(await eventsOf(t, 'organizations.invitation_revoked', org.id)).toHaveLength(1);
  });

  it('when a member without members:invite, or an admin inviting as owner, or for a member or a pending email invites, then each is refused', async () => {
    await ready();
    const owner = await person(t);
    const admin = await person(t);
    const member = await person(t);
    const org = await makeOrg(t, owner);
    await addMember(t, org.id, admin, 'admin');
    await addMember(t, org.id, member, 'member');
    const I = `${O}/${org.id}/invitations`;
    refused(await t.request('POST', I, { session: member.token, body: { email: uniqueEmail(), role: 'member' } }), 403, 'ORG_FORBIDDEN');
    refused(await t.request('GET', I, { session: member.token }), 403, 'ORG_FORBIDDEN');
    refused(await t.request('POST', I, { session: admin.token, body: { email: uniqueEmail(), role: 'owner' } }), 403, 'ORG_FORBIDDEN');
    refused(await t.request('POST', I, { session: admin.token, body: { email: member.user.email, role: 'member' } }), 409, 'ORG_ALREADY_MEMBER');
    refused(await t.request('POST', I, { session: admin.token, body: { email: 'not-an-email', role: 'member' } }), 400, 'VALIDATION_ERROR');
    refused(await t.request('POST', I, { session: admin.token, body: { email: uniqueEmail(), role: 'ghost' } }), 400, 'VALIDATION_ERROR');
    const email = uniqueEmail('twice');
    await inviteMail(admin, org.id, email);
    refused(await t.request('POST', I, { session: admin.token, body: { email: email.toUpperCase(), role: 'member' } }), 409, 'ORG_INVITATION_PENDING');
    // A custom role a pending invitation names cannot be deleted.
    expect((await t.request('POST', `${O}/${org.id}/roles`, { session: owner.token, body: { name: 'guest', permissions: [] } })).status).toBe(201);
    await inviteMail(owner, org.id, uniqueEmail('guest'), 'guest');
    refused(await t.request('DELETE', `${O}/${org.id}/roles/guest`, { session: owner.token }), 409, 'ORG_ROLE_IN_USE');
  });

  it('when more invitations than the hourly budget are sent for one organization, then the next is 429 and another organization is not affected', async () => {
    await ready();
    const owner = await person(t);
    const org = await makeOrg(t, owner);
    const other = await makeOrg(t, owner);
    for (let i = 0; i < 5; i++) {
      expect((await t.request('POST', `${O}/${org.id}/invitations`, { session: owner.token, body: { email: uniqueEmail('b'), role: 'member' } })).status).toBe(
        201,
      );
    }
    refused(
      await t.request('POST', `${O}/${org.id}/invitations`, { session: owner.token, body: { email: uniqueEmail('b'), role: 'member' } }),
      429,
      'RATE_LIMITED',
    );
    expect((await t.request('POST', `${O}/${other.id}/invitations`, { session: owner.token, body: { email: uniqueEmail('b'), role: 'member' } })).status).toBe(
      201,
    );
  });

  it('when a user tries more tokens than the accept budget allows, then the next try is 429 whatever the token', async () => {
    const t2 = await startTestApp({ env: { RATE_LIMIT_ORGANIZATIONS_ACCEPT: '3/1m' } });
    try {
      await t2.app.modules.hub.install(['organizations']);
      const guesser = await makeSession(t2, { email: uniqueEmail('guess') });
      for (let i = 0; i < 3; i++) {
        refused(
          await t2.request('POST', `${O}/invitations/accept`, { session: guesser.token, body: { token: `orginv_guess${i}` } }),
          400,
          'ORG_INVITATION_INVALID',
        );
      }
      refused(await t2.request('POST', `${O}/invitations/accept`, { session: guesser.token, body: { token: 'orginv_guess9' } }), 429, 'RATE_LIMITED');
    } finally {
      await t2.close();
    }
  });
});
