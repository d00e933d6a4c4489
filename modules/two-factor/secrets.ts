import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, randomInt } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';
import { productName, randomToken, serverSecret, unavailable, type AppContext } from './core.js';

/**
 * Keys derived (HKDF-SHA256) from the server secret, one per use: codes, device tokens and backup
 * codes are stored as keyed hashes (a 6-digit code has only a million values, so a plain hash read
 * from the database could be reversed), TOTP secrets encrypted with AES-256-GCM.
 */
const keys = new WeakMap<AppContext, Map<string, Buffer>>();

function keyFor(app: AppContext, purpose: 'codes' | 'totp'): Buffer {
  const secret = serverSecret(app);
  if (!secret) throw unavailable('Two-factor needs a server secret: set COOKIE_SECRET (gatehouse init generates one)');
  let m = keys.get(app);
  if (!m) keys.set(app, (m = new Map()));
  let k = m.get(purpose);
  if (!k) m.set(purpose, (k = Buffer.from(hkdfSync('sha256', secret, 'gatehouse:two-factor', purpose, 32))));
  return k;
}

/** A keyed hash bound to its scope (a challenge, a user, a device), so equal codes never share a hash. */
export const keyedHash = (app: AppContext, scope: string, value: string) => createHmac('sha256', keyFor(app, 'codes')).update(`${scope}:${value}`).digest('hex');

const VERSION = 'v1';

export function encrypt(app: AppContext, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(app, 'totp'), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export function decrypt(app: AppContext, sealed: string): string {
  const [v, iv, tag, body] = sealed.split('.');
  if (v !== VERSION || !iv || !tag || body === undefined) throw new Error('unreadable two-factor secret');
  const decipher = createDecipheriv('aes-256-gcm', keyFor(app, 'totp'), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/* TOTP (RFC 6238): SHA-1, 6 digits, 30 s, the defaults every authenticator app reads */

export const TOTP_PERIOD = 30;

export function newTotp(app: AppContext, label: string): { secret: string; uri: string } {
  const secret = new OTPAuth.Secret({ size: 20 });
  const totp = new OTPAuth.TOTP({ issuer: productName(app), label, secret, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD });
  return { secret: secret.base32, uri: totp.toString() };
}

/** The time step a code belongs to (±1 step of drift), or null when it matches none. */
export function totpStep(secretBase32: string, code: string, now = Date.now()): number | null {
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secretBase32), algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD });
  const delta = totp.validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD) + delta;
}

export const qrDataUrl = (uri: string): Promise<string> => QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 240 });

/* Backup codes: 10 letters and digits without look-alikes, shown as xxxxx-xxxxx */

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export function newBackupCode(): string {
  const chars = Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

/** "ABCDE fghjk", "abcde-fghjk" → "abcdefghjk"; null when it cannot be a backup code. */
export function normalizeBackupCode(input: string): string | null {
  const s = input.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z0-9]{10}$/.test(s) ? s : null;
}

export const newDeviceToken = () => randomToken('tdv');
