import { describe, expect, it } from 'vitest';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { csrfIn, WebClient } from '../helpers/web-client.js';
import { linkIn, mailsTo, mailTo } from './flows-helpers.js';

// The account page's email section and the confirmation page (WEB_PAGES=true) over plain HTTP: the
// API's service behind them, CSRF on both posts, the same neutral outcome, the link's page asking for a click.
const { t, smtp } = appWithMail({ env: { WEB_PAGES: 'true' } });

const WAIT = 15_000;
const CONFIRM_SUBJECT = /^Confirm your new email address for Gatehouse$/;

async function signedIn(values: Partial<UserRecord> = {}) {
  const user = await makeUser(t, { email: uniqueEmail('web-mail'), ...values });
  const c = new WebClient(t.url);
  const r = await c.submit('/login', '/login', { email: user.email, password: DEFAULT_PASSWORD });
  expect(r.location).toBe('/account');
  return { c, user };
}

const ask = (c: WebClient, form: Record<string, string>) => c.submit('/account', '/account/email', form);
const stored = (id: string) => t.app.repos.users.findById(id);

describe('the email section of /account', () => {
  it('when the page is shown, then it has the current address, whether it is verified, and the change form', async () => {
    const { c, user } = await signedIn({ is_verified: false });
    const page = await c.get('/account');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`data-current-email>${user.email}<`);
    expect(page.text).toContain('not verified yet');
    expect(page.text).toContain('action="/account/email"');
    expect(page.text).toContain('name="new_email"');
  });

  it('when a change is asked for, then the page says the neutral outcome and the mail links to the hosted confirmation page; a click there moves the account', async () => {
    const { c, user } = await signedIn();
    const to = uniqueEmail('web-new');
    const r = await ask(c, { new_email: to, current_password: DEFAULT_PASSWORD });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/account?done=email_sent#email');
    expect((await c.get('/account?done=email_sent')).text).toContain('If the new address can be used, a confirmation link was sent to it.');
    const link = linkIn(await mailTo(smtp, to, CONFIRM_SUBJECT, WAIT));
    expect(link.pathname).toBe('/account/email/confirm');

    // Opening the link changes nothing by itself (a mail scanner may open it): it shows a button.
    const page = await c.get(link.pathname + link.search);
    expect(page.status).toBe(200);
    expect(page.text).toContain('action="/account/email/confirm"');
    expect((await stored(user.id))!.email).toBe(user.email);

    // Without the form token: the 403 page, nothing changes.
    const forged = await c.request('POST', '/account/email/confirm', { form: { token: link.searchParams.get('token')! } });
    expect(forged.status).toBe(403);
    expect((await stored(user.id))!.email).toBe(user.email);

    const done = await c.submit(link.pathname + link.search, '/account/email/confirm', { token: link.searchParams.get('token')! });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/account?done=email_changed#email');
    expect((await stored(user.id))!.email).toBe(to);
    const after = await c.get('/account?done=email_changed');
    expect(after.text).toContain(`data-current-email>${to}<`);
    expect(after.text).toContain('Your email address was changed.');

    // Used: the page says so, with the status of the API's answer.
    const again = await c.submit(link.pathname + link.search, '/account/email/confirm', { token: link.searchParams.get('token')! });
    expect(again.status).toBe(400);
    expect(again.text).toContain('not valid any more');
  });

  it('when the link is confirmed in a browser that is not signed in, then a page says the new address and offers sign-in', async () => {
    const { c } = await signedIn();
    const to = uniqueEmail('web-elsewhere');
    await ask(c, { new_email: to, current_password: DEFAULT_PASSWORD });
    const link = linkIn(await mailTo(smtp, to, CONFIRM_SUBJECT, WAIT));
    const phone = new WebClient(t.url);
    const r = await phone.submit(link.pathname + link.search, '/account/email/confirm', { token: link.searchParams.get('token')! });
    expect(r.status).toBe(200);
    expect(r.text).toContain(`Your account now uses ${to}`);
    expect(r.text).toContain('href="/login"');
  });

  it('when the address belongs to another account, then the outcome on the page is the same', async () => {
    const holder = await makeUser(t, { email: uniqueEmail('web-holder') });
    const { c, user } = await signedIn();
    const r = await ask(c, { new_email: holder.email, current_password: DEFAULT_PASSWORD });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/account?done=email_sent#email');
    await mailTo(smtp, holder.email, /^Someone tried to use your address on Gatehouse$/, WAIT);
    expect((await stored(user.id))!.email).toBe(user.email);
  });

  it('when the password is wrong or the address bad, then the page again with the API message and status', async () => {
    const { c, user } = await signedIn();
    const wrong = await ask(c, { new_email: uniqueEmail('web-wrong'), current_password: 'Not-It-123' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('Current password is incorrect');
    const bad = await ask(c, { new_email: 'not-an-email', current_password: DEFAULT_PASSWORD });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('new_email');
    const same = await ask(c, { new_email: user.email, current_password: DEFAULT_PASSWORD });
    expect(same.status).toBe(400);
    expect(same.text).toContain('The new address is the current one');
    await t.app.services.deferred.idle();
    expect(mailsTo(smtp, user.email)).toEqual([]);
  });

  it('when the form is posted without its token, then 403 and nothing is sent', async () => {
    const { c, user } = await signedIn();
    const to = uniqueEmail('web-forged');
    await c.get('/account');
    const r = await c.request('POST', '/account/email', { form: { new_email: to, current_password: DEFAULT_PASSWORD, _csrf: 'forged' } });
    expect(r.status).toBe(403);
    await t.app.services.deferred.idle();
    expect(mailsTo(smtp, to)).toEqual([]);
    expect((await stored(user.id))!.email).toBe(user.email);
  });

  it('when the account has no password, then the section says to set one first instead of the form', async () => {
    const { c, user } = await signedIn();
    await t.app.repos.users.update(user.id, { password_hash: null });
    const page = await c.get('/account');
    expect(page.text).not.toContain('action="/account/email"');
    expect(page.text).toContain('href="/forgot-password"');
    // A forged post is refused by the service all the same.
    const r = await c.request('POST', '/account/email', { form: { _csrf: csrfIn(page.text), new_email: uniqueEmail('x'), current_password: 'x' } });
    expect(r.status).toBe(400);
    expect(r.text).toContain('no password');
  });

  it('when the confirmation page has no token or a bad one, then 400 with the invalid-link page', async () => {
    const c = new WebClient(t.url);
    expect((await c.get('/account/email/confirm')).status).toBe(400);
    const r = await c.submit('/account/email/confirm?token=eml_nothing', '/account/email/confirm', { token: 'eml_nothing' });
    expect(r.status).toBe(400);
    expect(r.text).toContain('not valid any more');
  });
});
