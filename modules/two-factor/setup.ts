import { randomUUID } from 'node:crypto';
import { badRequest, emailAddress, normalizePhone, notFound, type ModuleContext, type Transaction, type UserRecord } from '../../src/module-api.js';
import { sendCode } from './codes.js';
import { views } from './methods.js';
import { notify } from './notices.js';
import { proofToAdd, requireProof, type Proof } from './proofs.js';
import { backupLookup, decrypt, encrypt, newBackupCode, newTotp, qrDataUrl, totpUri } from './secrets.js';
import type { Caller } from './service.js';
import { settings } from './settings.js';
import { store, type MethodKind, type MethodRow } from './store.js';
import { withUserLock } from './user-lock.js';
import { methodEvent } from './audit.js';

/** Adding a method: checks, the row under the user's lock, the first code or the backup codes; new backup codes. */

export const BACKUP_CODE_COUNT = 10;

function assertKindOffered(ctx: ModuleContext, kind: MethodKind): void {
  if (!settings(ctx).methods.includes(kind))
    throw badRequest(
      `The ${kind} method is not offered here`,
      [{ field: 'method', message: `one of ${settings(ctx).methods.join(', ')}` }],
      'METHOD_NOT_AVAILABLE',
    );
}

export interface SetupInput extends Proof {
  identifier?: string;
  email?: string;
  phone?: string;
}

/** Refuses a setup the user's methods rule out (asked before the proof, and again under the user's lock). */
export function assertNew(existing: MethodRow[], kind: MethodKind, identifier: string | null): void {
  if (kind === 'backup_codes' && existing.some((m) => m.kind === 'backup_codes')) {
    throw badRequest('Backup codes are set up already; use POST /auth/two_factor/backup_codes/regenerate for a new set', undefined, 'ALREADY_SET_UP');
  }
  if (kind === 'totp' && existing.some((m) => m.kind === 'totp' && m.status === 'active')) {
    throw badRequest('An authenticator app is set up already; remove it first', undefined, 'ALREADY_SET_UP');
  }
  if (identifier && existing.some((m) => m.kind === kind && m.status === 'active' && m.identifier === identifier)) {
    throw badRequest(`This ${kind === 'email' ? 'address' : 'number'} is set up already`, undefined, 'ALREADY_SET_UP');
  }
}

/**
 * Adds a method (backup codes at once, the others pending until a code confirms them). The check is
 * made again, and the row written, under the user's lock: two setups at once make one method.
 */
export async function setup(c: Caller, kind: MethodKind, input: SetupInput) {
  assertKindOffered(c.ctx, kind);
  const identifier = kind === 'email' || kind === 'sms' ? addressFor(c.user, kind, input) : null;
  assertNew(await store.methods(c.ctx, c.user.id), kind, identifier);
  await proofToAdd(c, input);
  const id = randomUUID();
  const now = new Date();
  const add = <T>(row: Pick<MethodRow, 'status' | 'secret_enc'> & { verified_at?: Date }, then: (tx: Transaction) => Promise<T>) =>
    withUserLock(c.ctx, c.user.id, async (transaction) => {
      assertNew(await store.methods(c.ctx, c.user.id, { transaction }), kind, identifier);
      if (row.status === 'pending_setup') await store.dropPendingSetups(c.ctx, c.user.id, kind, { transaction });
      await store.createMethod(c.ctx, { id, user_id: c.user.id, kind, identifier, created_at: now, ...row }, { transaction });
      // Added when it is usable: backup codes at once, the others when a code confirms them (service.ts verifyCode).
      if (row.status === 'active') await c.ctx.audit.record(methodEvent('two_factor.method_added', c.user.id, { id, kind }), { tx: transaction });
      return then(transaction);
    });
  if (kind === 'backup_codes') {
    const codes = await add({ status: 'active', secret_enc: null, verified_at: now }, (transaction) => writeBackupCodes(c, id, now, transaction));
    await notify(c, 'backup_codes');
    return {
      success: true,
      method_id: id,
      method: kind,
      status: 'active',
      codes,
      backup_codes: codes,
      message: 'Backup codes generated; store them now, they are shown once',
    };
  }
  if (kind === 'totp') {
    const { secret, uri } = newTotp(c.ctx, c.user.email);
    await add({ status: 'pending_setup', secret_enc: encrypt(c.ctx, secret) }, async () => undefined);
    const qr = await qrDataUrl(uri);
    return {
      success: true,
      method_id: id,
      method: kind,
      status: 'pending_setup',
      verification_sent: false,
      // Stored encrypted; shown again only while the setup is pending (pendingSetup).
      secret,
      otpauth_url: uri,
      uri,
      qr_code: qr,
      qr_code_url: qr,
      message: 'Scan the QR code with an authenticator app, then verify a code with action "setup"',
    };
  }
  await add({ status: 'pending_setup', secret_enc: null }, async () => undefined);
  const method = await store.method(c.ctx, id);
  if (!method) throw new Error('two-factor: the method just added is gone');
  const sent = await sendCode(c.ctx, c.user, method, 'setup', c.session.id);
  return {
    success: true,
    method_id: id,
    method: kind,
    status: 'pending_setup',
    verification_sent: true,
    identifier: (await views(c.ctx, [method]))[0].identifier,
    expires_in: sent.ttl,
    expires_at: sent.expiresAt.toISOString(),
    message: 'Verification code sent',
  };
}

/** How long an unconfirmed authenticator setup's key can be read again: a reload or a second look, not another day. */
export const PENDING_SETUP_READABLE_MS = 60 * 60_000;

/**
 * The user's newest unconfirmed setup of a kind, shown again (GET /auth/two_factor/:method/setup), so a
 * page reloaded halfway through a setup can go on with it. An authenticator app's key and QR code come
 * back while the setup is pending and younger than PENDING_SETUP_READABLE_MS; once confirmed (or older)
 * never. 404 METHOD_NOT_FOUND when there is none.
 */
export async function pendingSetup(c: Caller, kind: MethodKind) {
  const rows = (await store.methods(c.ctx, c.user.id)).filter((m) => m.kind === kind && m.status === 'pending_setup');
  const m = rows[rows.length - 1];
  const stale = m && kind === 'totp' && Date.now() - new Date(m.created_at).getTime() > PENDING_SETUP_READABLE_MS;
  if (!m || stale) throw notFound(`No pending ${kind} setup`, 'METHOD_NOT_FOUND');
  const base = {
    success: true,
    method_id: m.id,
    method: kind,
    status: 'pending_setup',
    identifier: (await views(c.ctx, [m]))[0].identifier,
    created_at: new Date(m.created_at).toISOString(),
  };
  if (kind !== 'totp') return base;
  if (!m.secret_enc) throw notFound(`No pending ${kind} setup`, 'METHOD_NOT_FOUND');
  const secret = decrypt(c.ctx, m.secret_enc);
  const uri = totpUri(c.ctx, c.user.email, secret);
  const qr = await qrDataUrl(uri);
  return { ...base, secret, otpauth_url: uri, uri, qr_code: qr, qr_code_url: qr };
}

function addressFor(user: UserRecord, kind: 'email' | 'sms', input: SetupInput): string {
  if (kind === 'email') {
    // The one email rule (as registration), so a code goes only to an address an account could have.
    const v = emailAddress.safeParse(input.identifier ?? input.email ?? user.email ?? '');
    if (!v.success) throw badRequest('identifier: must be an email address', [{ field: 'identifier', message: 'must be an email address' }]);
    return v.data;
  }
  const raw = input.identifier ?? input.phone ?? user.phone ?? '';
  const phone = normalizePhone(raw);
  if (!phone)
    throw badRequest('identifier: must be a phone number in E.164 form, e.g. +15551234567', [
      { field: 'identifier', message: 'must be an E.164 phone number' },
    ]);
  return phone;
}

/** A set of backup codes just made: shown once. */
export interface BackupCodes {
  methodId: string;
  codes: string[];
}

/**
 * The user's first set of backup codes, inside the caller's transaction (under the user's lock): the
 * method row, its codes and its two_factor.method_added event. Made when two-factor is turned on
 * (service.ts turnOn: POST /toggle, or confirming the first method); `null` when backup codes are not
 * offered here or the user has them already (never replaced this way: that is regenerate's, with proof).
 */
export async function firstBackupCodes(c: Caller, existing: MethodRow[], transaction: Transaction): Promise<BackupCodes | null> {
  if (!settings(c.ctx).methods.includes('backup_codes') || existing.some((m) => m.kind === 'backup_codes')) return null;
  const methodId = randomUUID();
  const now = new Date();
  await store.createMethod(
    c.ctx,
    { id: methodId, user_id: c.user.id, kind: 'backup_codes', identifier: null, status: 'active', secret_enc: null, created_at: now, verified_at: now },
    { transaction },
  );
  const codes = await writeBackupCodes(c, methodId, now, transaction);
  await c.ctx.audit.record(methodEvent('two_factor.method_added', c.user.id, { id: methodId, kind: 'backup_codes' }), { tx: transaction });
  return { methodId, codes };
}

async function writeBackupCodes(c: Caller, methodId: string, now: Date, transaction: Transaction): Promise<string[]> {
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  // Under bcrypt at the server's cost, each with its own salt (ASVS 6.5.2: about 50 bits is less than 112).
  const rows = await Promise.all(
    codes.map(async (code) => {
      const normalized = code.replace('-', '');
      return { hash: await c.ctx.passwords.hash(normalized), lookup: backupLookup(c.ctx, c.user.id, normalized) };
    }),
  );
  await store.replaceBackupCodes(c.ctx, methodId, c.user.id, rows, now, { transaction });
  return codes;
}

/** A new set of backup codes; the old set stops working in the same transaction. */
export async function regenerateBackupCodes(c: Caller, proof: Proof) {
  const method = (await store.methods(c.ctx, c.user.id)).find((m) => m.kind === 'backup_codes');
  if (!method) throw notFound('Backup codes are not set up; use POST /auth/two_factor/backup_codes/setup', 'METHOD_NOT_FOUND');
  await requireProof(c, proof, 'New backup codes');
  const codes = await c.ctx.db.transaction((transaction) => writeBackupCodes(c, method.id, new Date(), transaction));
  await notify(c, 'backup_codes');
  return {
    success: true,
    method_id: method.id,
    method: 'backup_codes',
    codes,
    backup_codes: codes,
    message: 'New backup codes generated; the old ones no longer work',
  };
}
