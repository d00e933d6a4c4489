import { AppError, badRequest, forbidden, notFound, type ModuleContext, type SessionRecord, type Transaction, type UserRecord } from '../../src/module-api.js';
import { checkCode, sendCode, type Purpose } from './codes.js';
import { activeMethods, isPrimary, ownMethod, views, type MethodView } from './methods.js';
import { notify } from './notices.js';
import { proofRequired, requireProof, type Proof } from './proofs.js';
import { assertNew, firstBackupCodes, type BackupCodes } from './setup.js';
import { PRIMARY_KINDS } from './settings.js';
import { store, type MethodKind, type MethodRow } from './store.js';
import { writeTwoFactorFlag } from './two-factor-flag.js';
import { withUserLock } from './user-lock.js';
import { methodEvent } from './audit.js';
import { extraMethods, extraView } from './extra.js';

/** Who is asking: the user, their session (pending or full) and its token. */
export interface Caller {
  ctx: ModuleContext;
  user: UserRecord;
  session: SessionRecord;
}

export type { Proof };

export const isPendingSession = (s: SessionRecord) => s.status !== 'active';

export type StartAction = 'login' | 'setup' | 'remove' | 'verify' | 'toggle' | 'disable' | 'manage';

/** Sends a code for an email or SMS method: to finish sign-in (pending session), confirm a setup, or prove a change. */
export async function start(c: Caller, kind: 'email' | 'sms', input: { method_id?: string; action?: StartAction }) {
  const pending = isPendingSession(c.session);
  const action = pending ? 'login' : input.action === 'login' ? 'manage' : (input.action ?? 'manage');
  if (pending && input.action && input.action !== 'login') throw forbidden('A pending session can only finish signing in', 'TWO_FACTOR_REQUIRED');
  const purpose: Purpose = action === 'login' ? 'login' : action === 'setup' ? 'setup' : 'manage';
  const wantStatus = purpose === 'setup' ? 'pending_setup' : 'active';
  let method: MethodRow;
  if (input.method_id) {
    method = await ownMethod(c.ctx, c.user.id, input.method_id);
    if (method.kind !== kind)
      throw badRequest(`method_id is a ${method.kind} method; use /auth/two_factor/${method.kind}/start`, [
        { field: 'method_id', message: `not a ${kind} method` },
      ]);
    if (method.status !== wantStatus)
      throw badRequest(
        purpose === 'setup' ? 'This method is set up already' : 'This method is not set up yet; verify it with action "setup"',
        undefined,
        'METHOD_NOT_ACTIVE',
      );
  } else {
    const found = (await store.methods(c.ctx, c.user.id)).filter((m) => m.kind === kind && m.status === wantStatus);
    if (!found.length) throw notFound(`No ${purpose === 'setup' ? 'pending ' : ''}${kind} method is set up`, 'METHOD_NOT_FOUND');
    method = found[found.length - 1];
  }
  const sent = await sendCode(c.ctx, c.user, method, purpose, c.session.id);
  return {
    success: true,
    message: 'Verification code sent',
    method: kind,
    method_id: method.id,
    verification_sent: true,
    identifier: (await views(c.ctx, [method]))[0].identifier,
    expires_in: sent.ttl,
    expires_at: sent.expiresAt.toISOString(),
  };
}

function assertCanEnable(methods: MethodRow[]): void {
  if (!methods.some(isPrimary)) throw badRequest('Set up and verify an email, SMS or authenticator method first', undefined, 'NO_VERIFIED_METHOD');
}

/**
 * Turning 2FA on, inside the caller's transaction under the user's lock: the flag, two_factor.enabled,
 * and the user's first backup codes when they have none (shown once, in the answer). The same whether
 * POST /toggle turns it on or confirming the first method does (verifyCode).
 */
async function turnOn(c: Caller, methods: MethodRow[], transaction: Transaction): Promise<BackupCodes | null> {
  await writeTwoFactorFlag(c.ctx, c.user.id, true, transaction);
  await c.ctx.audit.record({ type: 'two_factor.enabled', userId: c.user.id }, { tx: transaction });
  return firstBackupCodes(c, methods, transaction);
}

/** Backup codes made as 2FA was turned on, as the answers carry them (a superset of the answers before). */
export const backupCodesFields = (made: BackupCodes | null) =>
  made ? { backup_codes: made.codes, codes: made.codes, backup_codes_method_id: made.methodId } : {};

/** Turns 2FA on (needs a verified method of its own) or off (needs a current code). */
export async function toggle(c: Caller, enable: boolean, proof: Proof) {
  const user = (await c.ctx.users.find(c.user.id)) ?? c.user;
  const active = await activeMethods(c.ctx, user.id);
  const answer = async (on: boolean, message: string, methods = active, made: BackupCodes | null = null) => ({
    success: true,
    two_factor_enabled: on,
    enabled: on,
    // The original client types active_methods as method names; the full views stay available beside them.
    active_methods: [...new Set(methods.map((m) => m.kind))],
    active_method_details: await views(c.ctx, methods),
    message,
    ...backupCodesFields(made),
  });
  if (Boolean(user.two_factor) === enable) return answer(enable, `Two-factor authentication is already ${enable ? 'on' : 'off'}`);
  if (enable) assertCanEnable(active);
  else if (active.length) await requireProof(c, proof, 'Turning two-factor off');
  const made = await withUserLock(c.ctx, user.id, async (transaction) => {
    if (!enable) {
      await writeTwoFactorFlag(c.ctx, user.id, false, transaction);
      await store.forgetDevices(c.ctx, user.id, { transaction });
      await c.ctx.audit.record({ type: 'two_factor.disabled', userId: user.id }, { tx: transaction });
      return null;
    }
    // Asked again under the lock: a method removed meanwhile must not leave 2FA on without one.
    const rows = await store.methods(c.ctx, user.id, { transaction });
    assertCanEnable(rows);
    return turnOn({ ...c, user }, rows, transaction);
  });
  // Turning it off is told by core's security notice (two_factor.disabled); turning it on only here.
  if (enable) await notify({ ctx: c.ctx, user }, 'enabled');
  const message = `Two-factor authentication turned ${enable ? 'on' : 'off'}`;
  if (!made) return answer(enable, message);
  return answer(enable, `${message}; store the backup codes now, they are shown once`, await activeMethods(c.ctx, user.id), made);
}

const lastMethod = () => badRequest('This is your last two-factor method; turn two-factor off first', undefined, 'LAST_METHOD');

/**
 * Removes a method; while 2FA is on, with a current code, and never the last one that stands alone.
 * The answer is given early as before, then decided again under the user's lock with what is there
 * then: of two removals at once of the last two methods, one wins.
 */
export async function removeMethod(c: Caller, id: string, proof: Proof, provenBy?: MethodRow) {
  const method = await ownMethod(c.ctx, c.user.id, id);
  const user = (await c.ctx.users.find(c.user.id)) ?? c.user;
  let proven = Boolean(provenBy);
  if (user.two_factor && method.status === 'active') {
    const primaries = (await activeMethods(c.ctx, user.id)).filter(isPrimary);
    if (isPrimary(method) && primaries.length <= 1) throw lastMethod();
    if (!proven) {
      await requireProof(c, proof, 'Removing a method');
      proven = true;
    }
  }
  await withUserLock(c.ctx, user.id, async (transaction) => {
    const rows = await store.methods(c.ctx, user.id, { transaction });
    const current = rows.find((m) => m.id === method.id);
    if (!current) throw notFound('Two-factor method not found', 'METHOD_NOT_FOUND');
    if (current.status === 'active' && (await c.ctx.users.find(user.id, { tx: transaction }))?.two_factor) {
      if (isPrimary(current) && rows.filter(isPrimary).length <= 1) throw lastMethod();
      if (!proven) throw proofRequired('Removing a method');
    }
    await store.deleteMethod(c.ctx, method.id, { transaction });
    if (current.status === 'active') await c.ctx.audit.record(methodEvent('two_factor.method_removed', user.id, current), { tx: transaction });
  });
  if (method.status === 'active') await notify({ ctx: c.ctx, user }, 'method_removed', method.kind);
  return { success: true, removed: true, method_id: method.id, message: 'Two-factor method removed' };
}

export interface VerifyInput {
  code: string;
  method_id?: string;
  method?: MethodKind;
  action?: 'login' | 'setup' | 'remove';
  trust_device?: boolean;
}

/** What a confirmed setup changed besides the method: two-factor turned on, and the backup codes made then (shown once). */
export interface SetupOutcome {
  turnedOn: boolean;
  backupCodes: BackupCodes | null;
}

/**
 * Checks a code. `login` (a pending session) is handled by the route, which then activates the
 * session; `setup` confirms a new method; `remove` removes the method the code came from.
 * Confirming an email, SMS or authenticator method while 2FA is off (the first one) turns 2FA on in
 * the same transaction, as toggle does (two_factor.enabled, the mail), and makes the user's first
 * backup codes when they have none: `setup` in the result.
 */
export async function verifyCode(c: Caller, input: VerifyInput): Promise<{ action: 'login' | 'setup' | 'remove'; method: MethodRow; setup?: SetupOutcome }> {
  const pending = isPendingSession(c.session);
  let method: MethodRow;
  if (input.method_id) method = await ownMethod(c.ctx, c.user.id, input.method_id);
  else if (input.method) {
    const wanted = input.action === 'setup' ? 'pending_setup' : 'active';
    const rows = (await store.methods(c.ctx, c.user.id)).filter((m) => m.kind === input.method && m.status === wanted);
    if (!rows.length) throw notFound(`No ${wanted === 'pending_setup' ? 'pending ' : ''}${input.method} method is set up`, 'METHOD_NOT_FOUND');
    method = rows[rows.length - 1];
  } else throw badRequest('method_id or method is required', [{ field: 'method_id', message: 'required' }]);
  if (input.method && method.kind !== input.method)
    throw badRequest(`method_id is a ${method.kind} method, not ${input.method}`, [{ field: 'method', message: 'does not match method_id' }]);

  const action = input.action ?? (pending ? 'login' : method.status === 'pending_setup' ? 'setup' : undefined);
  if (!action) throw badRequest('action is required: login, setup or remove', [{ field: 'action', message: 'required' }]);
  if (pending && action !== 'login') throw forbidden('A pending session can only finish signing in', 'TWO_FACTOR_REQUIRED');
  if (!pending && action === 'login') throw badRequest('This session is signed in already', undefined, 'ALREADY_VERIFIED');
  if (action === 'setup' && method.status !== 'pending_setup') throw badRequest('This method is set up already', undefined, 'METHOD_NOT_PENDING');
  if (action !== 'setup' && method.status !== 'active')
    throw badRequest('This method is not set up yet; verify it with action "setup"', undefined, 'METHOD_NOT_ACTIVE');

  const purpose: Purpose = action === 'login' ? 'login' : action === 'setup' ? 'setup' : 'manage';
  await checkCode(c.ctx, c.user, method, input.code, purpose, c.session.id);
  if (action !== 'setup') return { action, method };
  const outcome = await withUserLock(c.ctx, c.user.id, async (transaction): Promise<SetupOutcome> => {
    const rows = await store.methods(c.ctx, c.user.id, { transaction });
    // A setup of the same kind may have been confirmed meanwhile (one authenticator app, one row per address).
    assertNew(rows, method.kind, method.identifier);
    if (!(await store.activateMethod(c.ctx, method.id, new Date(), { transaction })))
      throw new AppError(400, 'METHOD_NOT_PENDING', 'This method is set up already');
    await c.ctx.audit.record(methodEvent('two_factor.method_added', c.user.id, method), { tx: transaction });
    // Read under the lock: of two first methods confirmed at once, one turns 2FA on and makes the backup codes.
    if (!PRIMARY_KINDS.includes(method.kind) || (await c.ctx.users.find(c.user.id, { tx: transaction }))?.two_factor)
      return { turnedOn: false, backupCodes: null };
    return { turnedOn: true, backupCodes: await turnOn(c, rows, transaction) };
  });
  await notify(c, 'method_added', method.kind);
  if (outcome.turnedOn) await notify(c, 'enabled');
  return { action, method, setup: outcome };
}

/** Admin or CLI: every method, code and trusted device of the user goes, 2FA turns off, the user is told. */
export async function resetUser(ctx: ModuleContext, target: UserRecord, actor: UserRecord | null) {
  if (actor && target.user_type === 'superadmin' && actor.user_type !== 'superadmin') throw forbidden('Only a superadmin can reset a superadmin');
  const removed = await withUserLock(ctx, target.id, async (transaction) => {
    const n = await store.deleteAll(ctx, target.id, { transaction });
    await writeTwoFactorFlag(ctx, target.id, false, transaction);
    // Actor from the request (the admin) or the command ({ via: 'cli' }).
    await ctx.audit.record({ type: 'two_factor.reset', userId: target.id, details: { methods_removed: n } }, { tx: transaction });
    return n;
  });
  // The user is told by core's security notice of two_factor.reset.
  return { user_id: target.id, two_factor_enabled: false, methods_removed: removed };
}

export async function listMethods(
  c: Pick<Caller, 'ctx' | 'user' | 'session'>,
): Promise<{ methods: (MethodView | ReturnType<typeof extraView>)[]; two_factor_enabled: boolean }> {
  const user = (await c.ctx.users.find(c.user.id)) ?? c.user;
  const rows = await store.methods(c.ctx, user.id);
  // A pending session sees what it may use to finish signing in, nothing more.
  const shown = isPendingSession(c.session) ? rows.filter((m) => m.status === 'active') : rows;
  // Methods other modules provide (a passkey) follow the module's own.
  const extra = (await extraMethods(c.ctx, user)).map(extraView);
  return { methods: [...(await views(c.ctx, shown)), ...extra], two_factor_enabled: Boolean(user.two_factor) };
}
