import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE } from '../../audit/audit-service.js';
import { normalizeIp } from '../middleware/client-ip.js';
import { instant } from './instant.js';

const TYPE_OR_FAMILY = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_]*)*(\.\*)?$/;

/** `limit`: 1..200, default 50. Refused rather than clamped: a script asking for 500 should learn it gets 200. */
const limitParam = z
  .string()
  .regex(/^\d{1,9}$/, 'must be a whole number')
  .transform(Number)
  .pipe(z.number().int().min(1, 'must be at least 1').max(MAX_AUDIT_PAGE, `must be at most ${MAX_AUDIT_PAGE}`))
  .optional()
  .transform((n) => n ?? DEFAULT_AUDIT_PAGE);

/** Comma-separated types; `sign_in.*` is a family. Whether each is declared is the handler's check (modules come and go). */
const typeList = z
  .string()
  .max(2000)
  .transform((v) =>
    v
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(z.string())
      .min(1, 'name at least one type')
      .max(50, 'at most 50 types')
      .refine((ts) => ts.every((t) => t.length <= 100 && TYPE_OR_FAMILY.test(t)), 'each type is a dotted name (sign_in.failed) or a family (sign_in.*)'),
  );

const cursor = z
  .string()
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor from a previous answer');

const window = {
  since: instant.optional(),
  until: instant.optional(),
  limit: limitParam,
  cursor: cursor.optional(),
  /** The session may come as `?session_id=` (request-context.ts); it is no filter. */
  session_id: z.string().optional(),
};

/** An id as users and actors have them (UUIDs; any short id-like text, never SQL-relevant). */
const idParam = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a user id');

const ipParam = z
  .string()
  .max(64)
  .transform((v) => normalizeIp(v))
  .refine((v) => isIP(v) !== 0, 'must be an IPv4 or IPv6 address');

const sinceBeforeUntil = (q: { since?: Date; until?: Date }) => !q.since || !q.until || q.since < q.until;
const windowIssue = { message: 'must be after since', path: ['until'] };

/**
 * GET /auth/admin/audit-events. Unknown parameters are refused: a misspelt filter (`userid=`) must not
 * quietly answer every event.
 */
export const auditEventsQuery = z
  .strictObject({
    user_id: idParam.optional(),
    actor_id: idParam.optional(),
    type: typeList.optional(),
    outcome: z.enum(['success', 'failure'], 'must be success or failure').optional(),
    ip: ipParam.optional(),
    ...window,
  })
  .refine(sinceBeforeUntil, windowIssue);

/** GET /auth/user/me/security-events: the caller's own events, by type and time. */
export const ownSecurityEventsQuery = z
  .strictObject({
    type: typeList.optional(),
    ...window,
  })
  .refine(sinceBeforeUntil, windowIssue);

export type AuditEventsQuery = z.output<typeof auditEventsQuery>;
