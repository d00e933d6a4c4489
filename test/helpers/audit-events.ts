import { randomBytes } from 'node:crypto';
import type { AuditRow } from '../../src/data/repositories/audit-repository.js';

/**
 * A UUIDv7 for an event made at `ms`, whatever came before (the service's own eventId keeps ids
 * increasing within the process, so it cannot make one in the past).
 */
export function idAt(ms: number): string {
  const h = Math.floor(ms).toString(16).padStart(12, '0') + randomBytes(10).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-7${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A stored event at `at` (test data, straight through the repository): what the service would write then. */
export function eventAt(at: Date, row: Partial<AuditRow> & { type: string }): AuditRow {
  return {
    id: idAt(at.getTime()),
    at,
    outcome: 'success',
    actor: null,
    user_id: null,
    ip: null,
    user_agent: null,
    request_id: null,
    identifier: null,
    details: {},
    ...row,
  };
}
