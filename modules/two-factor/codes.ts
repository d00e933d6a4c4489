import { randomUUID } from 'node:crypto';
import { AppError, Codes, maskEmail, maskPhone, randomCode, safeEqual, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { backupLookup, decrypt, keyedHash, normalizeBackupCode, totpStep } from './secrets.js';
import { settings } from './settings.js';
import { store, type MethodRow } from './store.js';

/**
 * What a code is for. `login`: a pending session finishing sign-in; `setup`: confirming a new method;
 * `manage`: proving a change (turning 2FA off, removing or adding a method, new backup codes). A code
 * sent for one never works for another.
 */
export type Purpose = 'login' | 'setup' | 'manage';

export const INVALID_CODE = 'INVALID_CODE';
export const CODE_EXPIRED = 'CODE_EXPIRED';
const USER_BUCKET = 'two-factor-user';
const SEND_BUCKET = 'two-factor-send';

export const invalidCode = (remaining: number) => new AppError(400, INVALID_CODE, 'Invalid code', undefined, { attempts_remaining: Math.max(0, remaining) });
/** A right code from the authenticator app that was used already: INVALID_CODE still (clients check it), with `reason` and words that say so. */
export const codeAlreadyUsed = (remaining: number) =>
  new AppError(400, INVALID_CODE, 'This code was already used; wait for the next one from your authenticator app', undefined, {
    attempts_remaining: Math.max(0, remaining),
    reason: 'already_used',
  });

const SMS_TEXT: Record<string, (p: string, code: string, m: number) => string> = {
  en: (p, code, m) => `${p} verification code: ${code}. It expires in ${m} minutes. Do not share it.`,
  es: (p, code, m) => `Código de verificación de ${p}: ${code}. Caduca en ${m} minutos. No lo compartas.`,
};
const smsText = (lang: string | null, product: string, code: string, m: number) =>
  (
    SMS_TEXT[
      String(lang ?? '')
        .slice(0, 2)
        .toLowerCase()
    ] ?? SMS_TEXT.en
  )(product, code, m);

/** Sends a fresh 6-digit code for an email or SMS method; only the newest code of a method and purpose works. */
export async function sendCode(
  ctx: ModuleContext,
  user: UserRecord,
  method: MethodRow,
  purpose: Purpose,
  sessionId: string,
): Promise<{ expiresAt: Date; ttl: number }> {
  const to = method.identifier;
  // Email and SMS methods are created with their address (setup.ts); only those are sent codes.
  if (!to) throw new Error(`two-factor: a ${method.kind} method without an address`);
  const { code_ttl: ttl, sends_per_method: points, user_attempts_window: durationSec } = settings(ctx);
  // Per method (not per session or address): however many sessions ask, one inbox or phone gets few codes.
  const sends = await ctx.limits.consume(SEND_BUCKET, method.id, { points, durationSec });
  if (!sends.allowed) {
    throw new AppError(429, Codes.RATE_LIMITED, 'Too many codes sent to this method; try again later', undefined, {
      retry_after: Math.max(1, sends.retryAfterSec),
    });
  }
  const now = new Date();
  const id = randomUUID();
  const code = randomCode(6);
  const expiresAt = new Date(now.getTime() + ttl * 1000);
  await store.createChallenge(ctx, {
    id,
    user_id: user.id,
    method_id: method.id,
    session_id: sessionId,
    purpose,
    code_hash: keyedHash(ctx, id, code),
    attempts: 0,
    created_at: now,
    expires_at: expiresAt,
    used_at: null,
  });
  const minutes = Math.max(1, Math.round(ttl / 60));
  if (method.kind === 'email') {
    await ctx.mail.send({ to: to, template: 'code', lang: user.lang, data: { name: user.name ?? undefined, code, expiresMinutes: minutes } });
  } else {
    await ctx.sms.send(to, smsText(user.lang, ctx.site.productName, code, minutes));
  }
  ctx.logger.info({ method: method.kind, to: method.kind === 'email' ? maskEmail(to) : maskPhone(to), purpose }, 'two-factor code sent');
  return { expiresAt, ttl };
}

/** The TOTP secret; one sealed under another server secret (COOKIE_SECRET changed) is a clear 503, not a crash. */
function readSecret(ctx: ModuleContext, sealed: string): string {
  try {
    return decrypt(ctx, sealed);
  } catch (err) {
    if (err instanceof AppError) throw err;
    ctx.logger.error({ reason: (err as Error).message }, 'a stored authenticator secret cannot be decrypted (was COOKIE_SECRET changed?)');
    throw new AppError(
      503,
      Codes.SERVICE_UNAVAILABLE,
      'The authenticator app cannot be checked right now; use another method or ask an administrator to reset two-factor',
    );
  }
}

/**
 * Checks a code for a method, or throws: 400 INVALID_CODE with attempts_remaining, 400 CODE_EXPIRED
 * when no sent code is live, 429 when the user's budget of wrong codes is spent. Every check first
 * takes one attempt from the user's budget (one atomic step in the limiter's store, so parallel
 * guesses cannot overrun it); a right code gives it back.
 */
export async function checkCode(ctx: ModuleContext, user: UserRecord, method: MethodRow, code: string, purpose: Purpose, sessionId: string): Promise<void> {
  // A code refused while finishing a sign-in is a failed sign-in, recorded after the answer (core's sign_in.failed).
  const refusedSignIn = (reason: string) => {
    if (purpose !== 'login') return;
    ctx.audit.recordLater({
      type: 'sign_in.failed',
      outcome: 'failure',
      userId: user.id,
      details: { method: 'two_factor', reason, second_factor: method.kind },
    });
  };
  const s = settings(ctx);
  const budget = await ctx.limits.consume(USER_BUCKET, user.id, { points: s.user_attempts, durationSec: s.user_attempts_window });
  if (!budget.allowed) {
    refusedSignIn('two_factor_throttled');
    throw new AppError(429, Codes.RATE_LIMITED, 'Too many wrong codes; try again later', undefined, {
      retry_after: Math.max(1, budget.retryAfterSec),
      attempts_remaining: 0,
    });
  }
  const clean = String(code).replace(/\s+/g, '');
  const now = new Date();
  let ok: boolean;
  let remaining = budget.remaining;
  switch (method.kind) {
    case 'email':
    case 'sms': {
      const ch = await store.liveChallenge(ctx, method.id, purpose, now);
      if (!ch || (ch.session_id && ch.session_id !== sessionId) || !(await store.addAttempt(ctx, ch.id, s.max_attempts))) {
        // Nothing was checked: the attempt goes back.
        await ctx.limits.refund(USER_BUCKET, user.id);
        refusedSignIn('two_factor_expired');
        throw new AppError(400, CODE_EXPIRED, 'The code expired or was not requested; request a new code', undefined, { attempts_remaining: 0 });
      }
      ok = /^\d{6}$/.test(clean) && safeEqual(keyedHash(ctx, ch.id, clean), ch.code_hash);
      if (ok) ok = await store.closeChallenge(ctx, ch.id, now);
      else {
        const left = s.max_attempts - (ch.attempts + 1);
        if (left <= 0) await store.closeChallenge(ctx, ch.id, now);
        remaining = Math.min(remaining, left);
      }
      break;
    }
    case 'totp': {
      const step = /^\d{6}$/.test(clean) && method.secret_enc ? totpStep(readSecret(ctx, method.secret_enc), clean, now.getTime()) : null;
      // A code accepted once is refused for the rest of its window (and so is any older one): still a failed
      // attempt, but the answer says why, so a person waits for the next code instead of retyping this one.
      ok = step !== null && (await store.useStep(ctx, method.id, step, now));
      if (!ok && step !== null) {
        refusedSignIn('two_factor_failed');
        throw codeAlreadyUsed(remaining);
      }
      break;
    }
    case 'backup_codes': {
      const norm = normalizeBackupCode(clean);
      ok = norm !== null && (await useBackupCode(ctx, user.id, method.id, norm, now));
      break;
    }
    default:
      ok = false;
  }
  if (!ok) {
    refusedSignIn('two_factor_failed');
    throw invalidCode(remaining);
  }
  await ctx.limits.refund(USER_BUCKET, user.id);
  await store.touchMethod(ctx, method.id, now);
}

/**
 * Uses up a backup code, once among any number of requests at once: a code made before salted hashes by
 * its keyed hash, else the row its lookup names, after bcrypt says it is this code. With no row to check,
 * one bcrypt all the same, so the time does not tell a wrong code from a used one.
 */
async function useBackupCode(ctx: ModuleContext, userId: string, methodId: string, normalized: string, now: Date): Promise<boolean> {
  if (await store.useBackupCode(ctx, methodId, keyedHash(ctx, `backup:${userId}`, normalized), now)) return true;
  const rows = await store.backupCodesByLookup(ctx, methodId, backupLookup(ctx, userId, normalized));
  if (!rows.length) {
    await ctx.passwords.verify(normalized, null);
    return false;
  }
  for (const row of rows) {
    if ((await ctx.passwords.verify(normalized, row.code_hash)) && (await store.useBackupCodeRow(ctx, row.id, now))) return true;
  }
  return false;
}
