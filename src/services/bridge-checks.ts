import type { SessionRecord } from '../data/repositories/session-repository.js';
import { AppError } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';

export type BridgeValidationMode = 'disabled' | 'standard' | 'advanced' | 'strict';

const STRICTNESS: readonly BridgeValidationMode[] = ['disabled', 'standard', 'advanced', 'strict'];

/**
 * The mode a bridge validation runs in: the server's BRIDGE_VALIDATION_MODE is the floor, so a
 * backend that names no mode (or a weaker one) cannot switch off the binding the operator set.
 */
export function effectiveMode(server: BridgeValidationMode, requested: BridgeValidationMode | undefined): BridgeValidationMode {
  if (!requested) return server;
  return STRICTNESS.indexOf(requested) > STRICTNESS.indexOf(server) ? requested : server;
}

export interface BridgeContext {
  mode: BridgeValidationMode;
  ip?: string | null;
  userAgent?: string | null;
  deviceId?: string | null;
}

/** "::ffff:10.0.0.1" and "10.0.0.1" are the same client. */
export const normalizeIp = (ip: string) =>
  ip
    .trim()
    .toLowerCase()
    .replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');

const mismatch = (what: string) => new AppError(401, Codes.INVALID_SESSION, `${what} mismatch`, undefined, { valid: false });

/**
 * Binds a bridge validation to the client the session was issued to: standard checks the IP,
 * advanced adds the User-Agent, strict adds the device. A value is compared only when both sides
 * know it, so a caller that sends nothing is not refused — except in strict mode, where a session
 * bound to a device at login must be presented with that same device id.
 */
export function checkBridgeContext(session: SessionRecord, ctx: BridgeContext): void {
  if (ctx.mode === 'disabled') return;
  if (ctx.ip && session.ip_address && normalizeIp(ctx.ip) !== normalizeIp(session.ip_address)) throw mismatch('IP address');
  if (ctx.mode === 'standard') return;
  if (ctx.userAgent && session.user_agent && ctx.userAgent.trim().slice(0, 512) !== session.user_agent.trim()) {
    throw mismatch('User agent');
  }
  if (ctx.mode === 'strict' && session.device_id && ctx.deviceId !== session.device_id) throw mismatch('Device ID');
}
