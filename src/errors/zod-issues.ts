import type { z } from 'zod';
import { badRequest, type AppError } from './app-error.js';

type Issue = z.core.$ZodIssue;

/** Issue kinds that only say "not this type"; a sibling branch's rule is more useful to a client. */
const GENERIC = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

/**
 * The message to show for one issue. A union ("null, '' or a country code") fails as a whole with
 * zod's bare "Invalid input"; the rule of the branch that got furthest says what is actually wrong.
 */
export function issueMessage(issue: Issue): string {
  if (issue.code !== 'invalid_union') return issue.message;
  const nested = (issue as { errors?: Issue[][] }).errors ?? [];
  for (const branch of nested) {
    const specific = branch.find((i) => !GENERIC.has(i.code));
    if (specific) return specific.message;
  }
  for (const branch of nested) {
    const inner = branch.find((i) => i.code === 'invalid_union');
    if (inner) return issueMessage(inner);
  }
  return issue.message;
}

/** Every issue as `{ field, message }` (`field` a dotted path under `prefix`, or null for the whole input). */
export const zodDetails = (err: z.ZodError, prefix?: string) =>
  err.issues.map((i) => ({ field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || null, message: issueMessage(i) }));

/**
 * The one zod-error formatter: 400 VALIDATION_ERROR naming the first bad field ("field: message"),
 * with every issue in `details`. Routes and services answer bad input the same way.
 */
export function invalidInput(err: z.ZodError, prefix?: string): AppError {
  const details = zodDetails(err, prefix);
  const first = details[0];
  return badRequest(first?.field ? `${first.field}: ${first.message}` : (first?.message ?? 'Invalid input'), details);
}

/** The input through a schema, or the 400 of `invalidInput`: what a service that takes unchecked input does first. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}
