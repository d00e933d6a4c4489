import { randomUUID } from 'node:crypto';
import { type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { keyedHash, newDeviceToken } from './secrets.js';
import { settings } from './settings.js';
import { store } from './store.js';

export const TRUSTED_DEVICE_COOKIE = 'trusted_device';
const hashOf = (ctx: ModuleContext, token: string) => keyedHash(ctx, 'device', token);
const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** Remembers this device for the user for the trusted_device_ttl setting; the token is shown once, stored hashed. */
export async function trustDevice(ctx: ModuleContext, userId: string, userAgent: string | null): Promise<{ token: string; expiresAt: Date }> {
  const token = newDeviceToken();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + settings(ctx).trusted_device_ttl * 1000);
  await store.addDevice(ctx, {
    id: randomUUID(),
    user_id: userId,
    token_hash: hashOf(ctx, token),
    user_agent: userAgent?.slice(0, 255) ?? null,
    created_at: now,
    expires_at: expiresAt,
    last_used_at: now,
  });
  return { token, expiresAt };
}

/**
 * Whether a device token skips the second step for this user: the user's own, not expired, and made
 * after the password last changed (a password change voids every trusted device).
 */
export async function isTrusted(ctx: ModuleContext, user: UserRecord, token: string | null | undefined): Promise<boolean> {
  if (!token || token.length > 200) return false;
  const row = await store.deviceByHash(ctx, hashOf(ctx, token));
  const now = new Date();
  if (!row || row.user_id !== user.id || new Date(row.expires_at).getTime() <= now.getTime()) return false;
  if (user.password_changed_at && new Date(row.created_at).getTime() < new Date(user.password_changed_at).getTime()) return false;
  await store.touchDevice(ctx, row.id, now);
  return true;
}

export async function listDevices(ctx: ModuleContext, userId: string) {
  const now = Date.now();
  return (await store.devices(ctx, userId))
    .filter((d) => new Date(d.expires_at).getTime() > now)
    .map((d) => ({ id: d.id, user_agent: d.user_agent, created_at: iso(d.created_at), expires_at: iso(d.expires_at), last_used_at: iso(d.last_used_at) }));
}
