import { z } from 'zod';

/**
 * A date (YYYY-MM-DD, midnight UTC) or an ISO 8601 timestamp (UTC when it names no zone), as a Date: the one reader of instants in
 * query strings (admin filters) and CLI flags (`gatehouse audit list --since`).
 */
export const instant = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/, 'must be a date (YYYY-MM-DD) or an ISO 8601 timestamp')
  // Without a zone it is UTC, as a date alone is: never the server's local time.
  .transform((v) => new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/.test(v) ? v : `${v.replace(' ', 'T')}Z`))
  .refine((d) => !Number.isNaN(d.getTime()), 'must be a real date');
