import { createHmac, randomInt } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';
import { randomToken, type ModuleContext } from '../../src/module-api.js';

/**
 * Keys derived from the server's secrets by the module context (ctx.keys), one per use: codes, device
 * tokens and backup codes are stored as keyed hashes (a 6-digit code has only a million values, so a
 * plain hash read from the database could be reversed), TOTP secrets sealed with AES-256-GCM.
 */
const hashKeys = new WeakMap<ModuleContext, Buffer>();

function hashKey(ctx: ModuleContext): Buffer {
  let k = hashKeys.get(ctx);
  if (!k) hashKeys.set(ctx, (k = ctx.keys.derive('codes')));
  return k;
}

/** A keyed hash bound to its scope (a challenge, a user, a device), so equal codes never share a hash. */
export const keyedHash = (ctx: ModuleContext, scope: string, value: string) => createHmac('sha256', hashKey(ctx)).update(`${scope}:${value}`).digest('hex');

export const encrypt = (ctx: ModuleContext, plaintext: string): string => ctx.keys.seal(plaintext, 'totp');
export const decrypt = (ctx: ModuleContext, sealed: string): string => ctx.keys.open(sealed, 'totp');

/* TOTP (RFC 6238): SHA-1, 6 digits, 30 s, the defaults every authenticator app reads */

export const TOTP_PERIOD = 30;

export function newTotp(ctx: ModuleContext, label: string): { secret: string; uri: string } {
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  return { secret, uri: totpUri(ctx, label, secret) };
}

/** The otpauth:// URI an authenticator app scans for a key (the QR code's content). */
export function totpUri(ctx: ModuleContext, label: string, secretBase32: string): string {
  const secret = OTPAuth.Secret.fromBase32(secretBase32);
  return new OTPAuth.TOTP({ issuer: ctx.site.productName, label, secret, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD }).toString();
}

/** The time step a code belongs to (±1 step of drift), or null when it matches none. */
export function totpStep(secretBase32: string, code: string, now = Date.now()): number | null {
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secretBase32), algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD });
  const delta = totp.validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD) + delta;
}

export const qrDataUrl = (uri: string): Promise<string> => QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 240 });

/* Backup codes: 10 letters and digits without look-alikes, shown as xxxxx-xxxxx, stored under bcrypt (setup.ts) */

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export function newBackupCode(): string {
  const chars = Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

/**
 * Where a backup code's row is found: the first 16 bits of its keyed hash. Too few to narrow a guess (a
 * code has about 50 bits), enough that a verification runs one bcrypt instead of one per unused code.
 */
export const backupLookup = (ctx: ModuleContext, userId: string, normalized: string) => keyedHash(ctx, `backup-lookup:${userId}`, normalized).slice(0, 4);

/** "ABCDE fghjk", "abcde-fghjk" → "abcdefghjk"; null when it cannot be a backup code. */
export function normalizeBackupCode(input: string): string | null {
  const s = input.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z0-9]{10}$/.test(s) ? s : null;
}

export const newDeviceToken = () => randomToken('tdv');
