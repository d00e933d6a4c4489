import { z } from 'zod';
import { USER_SORT_FIELDS } from '../../data/repositories/user-repository.js';
import { adminUpdateSchema, createUserSchema, userTypeField } from '../../services/user-fields.js';
import { USER_ALIASES, withAliases } from './aliases.js';
import { instant } from './instant.js';

export const MAX_PAGE_SIZE = 100;

const intParam = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, 'must be a positive integer')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`))
    .transform((n) => Math.min(n, max))
    .optional()
    .transform((n) => n ?? fallback);

/** GET /auth/admin/users: search, filters, sort, and a page number or a cursor (limit capped, not refused). */
export const listUsersQuery = withAliases(
  {
    ...USER_ALIASES,
    sort_by: 'sortBy',
    sort_order: 'sortOrder',
    verified: 'is_verified',
    createdFrom: 'created_from',
    createdTo: 'created_to',
    created_after: 'created_from',
    created_before: 'created_to',
  },
  z.object({
    q: z.string().max(200).optional(),
    user_type: userTypeField.optional(),
    is_verified: z
      .enum(['true', 'false', '1', '0'], 'must be true or false')
      .transform((v) => v === 'true' || v === '1')
      .optional(),
    created_from: instant.optional(),
    created_to: instant.optional(),
    cursor: z
      .string()
      .max(600)
      .regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor from a previous answer')
      .optional(),
    sortBy: z.enum(USER_SORT_FIELDS, `must be one of ${USER_SORT_FIELDS.join(', ')}`).optional(),
    sortOrder: z
      .string()
      .toLowerCase()
      .pipe(z.enum(['asc', 'desc'], 'must be asc or desc'))
      .optional(),
    page: intParam(1, 1_000_000, 1),
    limit: intParam(1, MAX_PAGE_SIZE, 20),
  }),
);

export const userIdParams = z.object({ id: z.string() });
export const userSessionParams = z.object({ id: z.string(), sessionId: z.string() });

/** Admin create and update bodies (camel or snake): the user service's own schemas, parsed once here. */
export const adminCreateBody = withAliases(USER_ALIASES, createUserSchema);
export const adminUpdateBody = withAliases(USER_ALIASES, adminUpdateSchema);

export const deleteUserBody = z.object({ reason: z.string().max(500).optional() });
export const deleteUserQuery = z.object({ reason: z.string().max(500).optional() });
