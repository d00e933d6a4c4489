import { isAppError, type ModulePageKit, type ModuleWebPage } from '../../../src/module-api.js';

/**
 * The invitation page (/invitations/:token, the link of the invitation mail; issue 53): the organization
 * and role for the invited, verified user, who accepts with one button (a CSRF-checked post that calls this
 * module's accept route); another signed-in user sees the mismatch; a signed-out visitor gets sign-in and
 * registration links that come back here. It says no more than the API does: the organization only to the
 * invited user, one message for unknown, used, revoked and expired links. Template: ./invitation.eta;
 * strings: ./i18n (`organizations.invitation.*`).
 */

type Opened = { organization?: { name?: string }; role?: string };

/** The `data` of the module's envelope; null when no module served the route (it is off). */
function dataOf(r: Record<string, unknown> | null): Opened | null {
  if (!r) return null;
  const d = r.data;
  if (typeof d !== 'object' || d === null) return {};
  const o = (d as Record<string, unknown>).organization;
  const role = (d as Record<string, unknown>).role;
  return {
    organization: typeof o === 'object' && o !== null ? { name: String((o as Record<string, unknown>).name ?? '') } : undefined,
    role: typeof role === 'string' ? role : undefined,
  };
}

/** What a refusal of the API shows: its own message for the known codes, else the error as a page. */
function refusal(kit: ModulePageKit, err: unknown): void {
  if (!isAppError(err) || err.status >= 500) throw err;
  const { t } = kit;
  const say = (status: number, key: string) =>
    kit.message(status, { title: t(`organizations.invitation.${key}_title`), text: t(`organizations.invitation.${key}`), tone: 'error' });
  if (err.code === 'ORG_INVITATION_MISMATCH') return say(403, 'mismatch');
  if (err.code === 'ORG_ALREADY_MEMBER') return say(409, 'already_member');
  if (err.code === 'ORG_INVITATION_INVALID' || err.code === 'VALIDATION_ERROR') return say(400, 'invalid');
  throw err;
}

const here = (kit: ModulePageKit) => `/invitations/${encodeURIComponent(kit.params.token ?? '')}`;

/** The module's invitation route `what` with the link's token, then `then` with its data; a refusal shows its page. */
async function withToken(kit: ModulePageKit, what: 'preview' | 'accept', then: (d: Opened) => void): Promise<void> {
  let d: Opened | null;
  try {
    d = dataOf(await kit.callRoute('post', `/auth/organizations/invitations/${what}`, { body: { token: kit.params.token ?? '' } }));
  } catch (err) {
    return refusal(kit, err);
  }
  // Null: the module is off (its page would not be served; a race with switching it off).
  if (!d) return kit.message(404, { title: kit.t('organizations.invitation.invalid_title'), text: kit.t('organizations.invitation.invalid'), tone: 'error' });
  then(d);
}

async function show(kit: ModulePageKit): Promise<void> {
  const title = kit.t('organizations.invitation.title');
  if (!kit.session) {
    const back = encodeURIComponent(here(kit));
    kit.render('invitation', { signedOut: true, login: `/login?return_to=${back}`, register: `/register?return_to=${back}` }, { title });
    return;
  }
  await withToken(kit, 'preview', (d) =>
    kit.render('invitation', { organization: d.organization?.name ?? '', role: d.role ?? '', action: here(kit) }, { title }),
  );
}

const accept = (kit: ModulePageKit) =>
  withToken(kit, 'accept', (d) =>
    kit.render(
      'invitation',
      { joined: true, organization: d.organization?.name ?? '', role: d.role ?? '' },
      { title: kit.t('organizations.invitation.joined_title') },
    ),
  );

export const invitationPages: ModuleWebPage[] = [
  { method: 'get', path: '/invitations/:token', auth: 'public', handler: show },
  { method: 'post', path: '/invitations/:token', auth: 'session', handler: accept },
];
