import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { ModuleContext, SessionRecord, SignInClient, UserRecord } from '../../src/module-api.js';
import { checkAssertion, userOptions } from './login.js';
import { row, store } from './store.js';

/**
 * A passkey as a second-factor method, through the two-factor module's own events (docs/modules.md,
 * "Events between modules"; modules/two-factor/extra.ts): the module never imports this one, nor this
 * one it. All the user's passkeys make one method, id `passkey`, type `passkey`.
 */
export const METHOD_ID = 'passkey';
const TYPE = 'passkey';

/** 'two_factor.extra_methods': the user's passkeys, as one method, once there is one. */
export async function offerMethod(p: Record<string, unknown>, ctx: ModuleContext): Promise<void> {
  const user = p.user as UserRecord | undefined;
  if (!user || !Array.isArray(p.methods)) return;
  const rows = (await store(ctx).Credential.findAll({ where: { user_id: user.id }, order: [['created_at', 'ASC']] })).map(row);
  if (!rows.length) return;
  const used = rows
    .map((r) => r.last_used_at)
    .filter((d): d is Date => Boolean(d))
    .map((d) => new Date(d).getTime());
  p.methods.push({
    id: METHOD_ID,
    type: TYPE,
    label: rows.length === 1 ? 'Passkey' : `Passkeys (${rows.length})`,
    created_at: new Date(rows[0].created_at).toISOString(),
    last_used_at: used.length ? new Date(Math.max(...used)).toISOString() : null,
  });
}

/** 'two_factor.extra_start' (type passkey): request options limited to the user's passkeys, the challenge bound to them. */
export async function startStep(p: Record<string, unknown>, ctx: ModuleContext): Promise<void> {
  const user = p.user as UserRecord;
  // Bound to the pending session that asked: another session of the user cannot answer with it.
  p.answer = { options: await userOptions(ctx, user.id, 'second_factor', { bind: (p.session as SessionRecord).id }) };
}

/**
 * 'two_factor.extra_verify' (type passkey): an assertion of one of the user's passkeys over a challenge
 * given to them for this step; user verification is not required (it is the second factor). Refusals
 * throw PASSKEY_INVALID (the two-factor module counts the attempt and records the failed sign-in).
 */
export async function verifyStep(p: Record<string, unknown>, ctx: ModuleContext): Promise<void> {
  const user = p.user as UserRecord;
  await checkAssertion(ctx, p.credential as AuthenticationResponseJSON, {
    purpose: 'second_factor',
    userId: user.id,
    bind: (p.session as SessionRecord).id,
    client: (p.client as SignInClient | undefined) ?? {},
  });
  p.verified = true;
}

export const isPasskeyStep = (p: Record<string, unknown>) => p.type === TYPE;
