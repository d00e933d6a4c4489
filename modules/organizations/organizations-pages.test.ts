import { describe, expect, it } from 'vitest';
import { appWithMail } from '../../test/helpers/app-with-mail.js';
import { BACKEND } from '../../test/helpers/backend.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../../test/helpers/factories.js';
import { WebClient } from '../../test/helpers/web-client.js';
import { addMember, inviteMailOf, makeOrg, O, person, refused, type Person } from './test/world.js';

/** The module's pages (issue 53 on issue 61's door): the invitation page from the mail's link to the membership. */
const { t, smtp } = appWithMail({ env: { RATE_LIMIT_ORGANIZATIONS_ACCEPT: '100/1m' } });

let installed = false;
async function ready() {
  if (!installed) await t.app.modules.hub.install(['organizations']);
  installed = true;
}

const inviteMail = async (owner: Person, orgId: string, email: string, role = 'member') => (await inviteMailOf(t, smtp, owner, orgId, email, role)).token;

async function browserOf(email: string) {
  const c = new WebClient(t.url);
  expect((await c.submit('/login', '/login', { email, password: DEFAULT_PASSWORD })).status).toBe(303);
  return c;
}

const memberRole = async (orgId: string, userId: string) => {
  const [rows] = (await t.app.sequelize.query('SELECT role FROM organization_members WHERE organization_id = ? AND user_id = ?', {
    replacements: [orgId, userId],
  })) as [{ role: string }[], unknown];
  return rows.map((r) => r.role);
};

describe(`organizations: the invitation page (${BACKEND})`, () => {
  it('when the invited user follows the mail link, signs in and accepts, then they are a member with the role, and the link is spent', async () => {
    await ready();
    const owner = await person(t);
    const org = await makeOrg(t, owner, { name: 'Page & Co' });
    const email = uniqueEmail('page-invitee');
    const token = await inviteMail(owner, org.id, email, 'admin');
    expect(token).toMatch(/^orginv_/);
    const path = `/invitations/${token}`;

    // Signed out: sign-in and registration links that come back here; not the organization.
    const visitor = new WebClient(t.url);
    const out = await visitor.get(path);
    expect(out.status).toBe(200);
    expect(out.text).toContain(`href="/login?return_to=${encodeURIComponent(path)}"`);
    expect(out.text).toContain(`href="/register?return_to=${encodeURIComponent(path)}"`);
    expect(out.text).toContain('data-invitation-register');
    expect(out.text).not.toContain('Page &amp; Co');
    expect(out.text).toMatch(/<h1[^>]*>Invitation to an organization<\/h1>/);

    const invitee = await makeUser(t, { email });
    const c = await browserOf(invitee.email);
    const page = await c.get(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('You are invited to join Page &amp; Co as admin.');
    expect(page.text).toContain(`action="${path}"`);

    // The post needs the page's token.
    expect((await c.request('POST', path, { form: {} })).status).toBe(403);
    expect(await memberRole(org.id, invitee.id)).toEqual([]);

    const done = await c.submit(path, path, {});
    expect(done.status, done.text.slice(0, 400)).toBe(200);
    expect(done.text).toContain('You joined Page &amp; Co as admin.');
    expect(await memberRole(org.id, invitee.id)).toEqual(['admin']);

    // Spent: the page says so, and a second post joins nothing.
    const again = await c.get(path);
    expect(again.status).toBe(400);
    expect(again.text).toContain('This invitation link is not valid');
    expect(again.text).not.toContain('Page &amp; Co');
  });

  it('when another signed-in user opens the link, then they see the mismatch and not the organization; an unknown token is the invalid page', async () => {
    await ready();
    const owner = await person(t);
    const org = await makeOrg(t, owner, { name: 'Secretive Ltd' });
    const token = await inviteMail(owner, org.id, uniqueEmail('page-someone'));
    const other = await makeUser(t, { email: uniqueEmail('page-other') });
    const c = await browserOf(other.email);

    const seen = await c.get(`/invitations/${token}`);
    expect(seen.status).toBe(403);
    expect(seen.text).toContain('This invitation is for another email address');
    expect(seen.text).not.toContain('Secretive Ltd');
    const tried = await c.submit(`/invitations/${token}`, `/invitations/${token}`, {});
    expect(tried.status).toBe(403);
    expect(await memberRole(org.id, other.id)).toEqual([]);

    const unknown = await c.get('/invitations/orginv_nothing_here');
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('This invitation link is not valid');
    const junk = await c.get(`/invitations/${'x'.repeat(300)}`);
    expect(junk.status).toBe(400);
  });

  it('when a signed-out visitor posts to the link, then they are sent to sign in and nothing is accepted', async () => {
    await ready();
    const owner = await person(t);
    const org = await makeOrg(t, owner);
    const email = uniqueEmail('page-late');
    const token = await inviteMail(owner, org.id, email);
    const visitor = new WebClient(t.url);
    // With a valid form token (the sign-in page's), so only the missing session refuses it.
    const r = await visitor.submit('/login', `/invitations/${token}`, {});
    expect(r.status).toBe(303);
    expect(r.location).toMatch(/^\/login/);
    const [rows] = (await t.app.sequelize.query('SELECT accepted_at FROM organization_invitations WHERE email = ?', { replacements: [email] })) as [
      { accepted_at: unknown }[],
      unknown,
    ];
    expect(rows).toEqual([{ accepted_at: null }]);
  });

  it('when a user opens their account, then the Organizations section lists their organizations and pending invitations; accept and leave work from it', async () => {
    await ready();
    const owner = await person(t);
    const team = await makeOrg(t, owner, { name: 'Team Blue' });
    const other = await makeOrg(t, owner, { name: 'Team Red' });
    const email = uniqueEmail('page-account');
    const me = await makeUser(t, { email });
    await addMember(t, team.id, { user: me, token: '' }, 'member');
    await inviteMail(owner, other.id, email, 'admin');
    // Another address's invitation is not listed.
    await inviteMail(owner, other.id, uniqueEmail('page-account-other'));
    const c = await browserOf(email);

    const account = await c.get('/account');
    expect(account.status).toBe(200);
    expect(account.text).toContain('id="organizations"');
    expect(account.text).toContain('href="#organizations"');
    expect(account.text).toContain('Team Blue: member');
    expect(account.text).toContain('Team Red invites you as admin');
    expect(account.text.match(/data-invitation="/g)).toHaveLength(1);

    const invitationId = /data-invitation="([^"]+)"/.exec(account.text)?.[1] ?? '';
    // By id, only the invited, verified address may accept: another user's try is the API's "not valid".
    const stranger = await person(t);
    refused(await t.request('POST', `${O}/invitations/${invitationId}/accept`, { session: stranger.token }), 400, 'ORG_INVITATION_INVALID');
    const accepted = await c.submit('/account', '/account/organizations/accept', { invitation: invitationId });
    expect(accepted.status).toBe(303);
    expect(await memberRole(other.id, me.id)).toEqual(['admin']);
    const after = await c.get(accepted.location ?? '/account');
    expect(after.text).toContain('You joined the organization.');
    expect(after.text).toContain('Team Red: admin');
    expect(after.text).not.toContain('data-invitation="');

    const left = await c.submit('/account', '/account/organizations/leave', { organization: team.id });
    expect(left.status).toBe(303);
    expect(await memberRole(team.id, me.id)).toEqual([]);
    expect((await c.get(left.location ?? '/account')).text).toContain('You left the organization.');

    // Without the form token nothing happens.
    expect((await c.request('POST', '/account/organizations/leave', { form: { organization: other.id } })).status).toBe(403);
    expect(await memberRole(other.id, me.id)).toEqual(['admin']);
  });

  it('when the last owner tries to leave from the account page, then it is refused and they stay', async () => {
    await ready();
    const owner = await person(t);
    const org = await makeOrg(t, owner, { name: 'Solo Inc' });
    const c = await browserOf(owner.user.email);
    const r = await c.submit('/account', '/account/organizations/leave', { organization: org.id });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(await memberRole(org.id, owner.user.id)).toEqual(['owner']);
  });

  it('when an admin opens the console, then Organizations is in the menu, the list searches by name, and an organization shows its members and count; a customer is refused', async () => {
    await ready();
    const owner = await person(t, { name: 'Ola Owner' });
    const org = await makeOrg(t, owner, { name: 'Console Findable Zeta' });
    await makeOrg(t, owner, { name: 'Console Other Eta' });
    const member = await person(t);
    await addMember(t, org.id, member, 'member');
    const admin = await makeUser(t, { email: uniqueEmail('page-admin'), user_type: 'admin' });
    const c = await browserOf(admin.email);

    expect((await c.get('/admin')).text).toContain('href="/admin/organizations"');
    const found = await c.get('/admin/organizations?q=findable%20zeta');
    expect(found.status).toBe(200);
    expect(found.text).toContain(`href="/admin/organizations/${org.id}"`);
    expect(found.text).not.toContain('Console Other Eta');
    expect(found.text).toContain('<label for="org-q">');

    const page = await c.get(`/admin/organizations/${org.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<h1[^>]*>Console Findable Zeta<\/h1>/);
    expect(page.text).toContain('2 members');
    expect(page.text).toContain(owner.user.email);
    expect(page.text).toContain(member.user.email);
    expect((await c.get('/admin/organizations/no-such-org')).status).toBe(404);

    const customer = await browserOf((await makeUser(t, { email: uniqueEmail('page-customer') })).email);
    expect((await customer.get('/admin/organizations')).status).toBe(403);
  });
});
