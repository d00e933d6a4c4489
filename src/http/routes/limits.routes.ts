import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import { z } from 'zod';
import { AppError, forbidden, unauthorized } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { LIMITS_RESET_KEY_HEADER, limitsResetKey, resetLimits } from '../../services/limit-reset.js';
import { secretMatcher } from '../../services/security/tokens.js';
import { defineRoute } from '../define-route.js';
import type { Config } from '../../config/schema.js';
import { normalizeIp } from '../middleware/client-ip.js';

const resetBody = z
  .object({
    email: z.string().trim().min(1).max(254).optional(),
    ip: z
      .string()
      .trim()
      .refine((v) => isIP(v) !== 0, 'must be an IP address')
      .optional(),
  })
  .refine((b) => b.email !== undefined || b.ip !== undefined, { message: 'email, ip or both are required', path: ['email'] });

const isLoopback = (ip: string) => /^127\./.test(ip) || ip === '0:0:0:0:0:0:0:1';

/** The connection comes from this machine: loopback, or one of the host's own addresses. */
function fromThisHost(socket: Socket): boolean {
  const remote = normalizeIp(socket.remoteAddress ?? '');
  return isLoopback(remote) || (remote !== '' && remote === normalizeIp(socket.localAddress ?? ''));
}

const matchers = new WeakMap<object, (given: unknown) => boolean>();

/**
 * `gatehouse limits reset` on the embedded default (no Redis): the limits live in this process's memory,
 * so the CLI asks the running server. Three locks, none enough alone: the TCP peer must be this host
 * (the socket, never a forwarded header), a request relayed by a proxy is refused, and the key derived
 * from config.json's secrets must be sent (limitsResetKey). The `admin` class limits guessing.
 */
export const resetLimitsLocal = defineRoute({
  method: 'post',
  path: '/internal/limits/reset',
  summary: 'Reset rate limits (from `gatehouse limits reset`, this host only)',
  auth: 'public',
  rateLimit: 'admin',
  body: resetBody,
  async handler({ req, body, app }) {
    requireLocalAdmin(req, app, 'Limits can be reset only from the server itself (gatehouse limits reset)');
    const cleared = await resetLimits(app, body);
    app.logger.info({ cleared: cleared.length }, 'rate limits reset from the CLI');
    return { success: true, cleared };
  },
});

/**
 * `gatehouse sessions revoke` on the embedded default (no Redis, so no message reaches the running
 * server): the CLI revoked the rows; the server drops every session and user it holds in memory, so
 * the next validation reads the database and finds them gone. Same three locks as the limits reset.
 */
export const forgetSessionsLocal = defineRoute({
  method: 'post',
  path: '/internal/sessions/forget',
  summary: 'Drop cached sessions (from `gatehouse sessions revoke`, this host only)',
  auth: 'public',
  rateLimit: 'admin',
  async handler({ req, app }) {
    requireLocalAdmin(req, app, 'Cached sessions can be dropped only from the server itself (gatehouse sessions revoke)');
    await app.services.sessions.resync();
    app.logger.info('cached sessions dropped after a revocation from the CLI');
    return { success: true };
  },
});

/** The TCP peer is this host, no proxy relayed the request, and it carries the key derived from config.json's secrets. */
function requireLocalAdmin(req: { socket: Socket; headers: Record<string, string | string[] | undefined> }, app: { config: Config }, refusal: string): void {
  if (!fromThisHost(req.socket) || req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined) throw forbidden(refusal);
  let matches = matchers.get(app.config);
  if (!matches) {
    const key = limitsResetKey(app.config);
    if (!key)
      throw new AppError(503, Codes.SERVICE_UNAVAILABLE, 'No secret is configured to derive the admin key from (COOKIE_SECRET, BRIDGE_VALIDATION_SECRET)');
    matches = secretMatcher(key);
    matchers.set(app.config, matches);
  }
  if (!matches(req.headers[LIMITS_RESET_KEY_HEADER])) throw unauthorized('Invalid admin key');
}
