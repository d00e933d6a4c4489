import { z } from 'zod';
import { badRequest } from '../../src/module-api.js';
import { UUID_RE } from './ids.js';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

/** `limit` (1..200, default 50; refused rather than clamped, as the audit list) and `cursor` (a next_cursor). */
export const pageQuery = {
  limit: z
    .string()
    .regex(/^\d{1,9}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be at least 1').max(MAX_PAGE, `must be at most ${MAX_PAGE}`))
    .optional()
    .transform((n) => n ?? DEFAULT_PAGE),
  cursor: z
    .string()
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor from a previous answer')
    .optional(),
};

export const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** The id a cursor stands for; anything else is a 400 naming the field. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!UUID_RE.test(id)) throw badRequest('cursor: not a cursor this list gave', [{ field: 'cursor', message: 'not a cursor this list gave' }]);
  return id;
}

/** One page from `limit + 1` rows: the rows and the cursor of the next page (null on the last). */
export function pageOf<T>(rows: T[], limit: number, idOf: (r: T) => string): { rows: T[]; next_cursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { rows: page, next_cursor: more && page.length ? encodeCursor(idOf(page[page.length - 1])) : null };
}
