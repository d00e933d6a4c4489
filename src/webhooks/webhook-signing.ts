import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets: `whsec_` + base64 of the key bytes. */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret (32 random bytes), shown to the operator once. */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a webhook secret (whsec_…)');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/**
 * The webhook-signature header: `v1,<base64 HMAC-SHA256(key, "${id}.${timestamp}.${body}")>`, one per
 * secret, space-separated (the current secret and, during a rotation, the previous one).
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  const message = `${id}.${timestamp}.${body}`;
  return secrets.map((s) => `v1,${createHmac('sha256', keyOf(s)).update(message).digest('base64')}`).join(' ');
}
