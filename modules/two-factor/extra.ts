import { AppError, badRequest, Codes, notFound, type ModuleContext, type SessionRecord, type SignInClient, type UserRecord } from '../../src/module-api.js';
import { settings } from './settings.js';

/**
 * Second-factor methods that other modules provide (a passkey), known only through the module's own
 * events, which another module answers (docs/modules.md, "Events between modules"):
 *
 * - `two_factor.extra_methods` `{user, methods}`: push the methods the user has, each
 *   `{id, type, label, created_at?, last_used_at?}`; listed by GET /methods and offered to a pending session.
 * - `two_factor.extra_start` `{type, user, session, answer}`: set `answer` (merged into the start answer,
 *   e.g. `{options}`) for a method of `type`.
 * - `two_factor.extra_verify` `{type, user, session, client, method_id, credential, verified}`: check
 *   the proof and set `verified = true`, or throw (an AppError: the refusal). Nothing answering is a refusal.
 *
 * The module's rules hold for them as for codes: each check takes one attempt from the user's budget of
 * wrong codes (a good one gives it back), a refusal while finishing a sign-in is `sign_in.failed`, and
 * with no provider answering the step fails closed.
 */
export interface ExtraMethod {
  id: string;
  type: string;
  label: string;
  created_at?: string | null;
  last_used_at?: string | null;
}

const EXTRA_METHODS = 'two_factor.extra_methods';
const EXTRA_START = 'two_factor.extra_start';
const EXTRA_VERIFY = 'two_factor.extra_verify';
const USER_BUCKET = 'two-factor-user';
const ID_RE = /^[A-Za-z0-9-]{1,64}$/;
const TYPE_RE = /^[a-z][a-z0-9_]{0,31}$/;

/** The other modules' methods of the user (malformed entries dropped). */
export async function extraMethods(ctx: ModuleContext, user: UserRecord): Promise<ExtraMethod[]> {
  const p = { user, methods: [] as unknown[] };
  await ctx.hooks.run(EXTRA_METHODS, p);
  return p.methods.filter(
    (m): m is ExtraMethod =>
      typeof m === 'object' &&
      m !== null &&
      ID_RE.test(String((m as ExtraMethod).id)) &&
      TYPE_RE.test(String((m as ExtraMethod).type)) &&
      typeof (m as ExtraMethod).label === 'string',
  );
}

/** An extra method as GET /methods and the sign-in answer show the module's own. */
export const extraView = (m: ExtraMethod) => ({
  id: m.id,
  method: m.type,
  type: m.type,
  status: 'active' as const,
  identifier: null,
  created_at: m.created_at ?? null,
  verified_at: m.created_at ?? null,
  last_used_at: m.last_used_at ?? null,
  metadata: { label: m.label },
});

/** POST /auth/two_factor/<type>/start for a method another module provides; null when nobody does. */
export async function startExtra(ctx: ModuleContext, user: UserRecord, session: SessionRecord, type: string): Promise<Record<string, unknown> | null> {
  if (!TYPE_RE.test(type)) return null;
  const method = (await extraMethods(ctx, user)).find((m) => m.type === type);
  if (!method) return null;
  const p: { type: string; user: UserRecord; session: SessionRecord; answer: Record<string, unknown> | null } = { type, user, session, answer: null };
  await ctx.hooks.run(EXTRA_START, p);
  if (!p.answer) return null;
  return { success: true, method: type, method_id: method.id, ...p.answer };
}

/**
 * Checks a proof for another module's method (`credential`); throws the refusal. Only `login` (a pending
 * session finishing its sign-in) is offered: such methods are set up and removed in their own module.
 */
export async function verifyExtra(
  ctx: ModuleContext,
  c: { user: UserRecord; session: SessionRecord; client: SignInClient },
  input: { method_id?: string; method?: string; credential: Record<string, unknown> },
): Promise<ExtraMethod> {
  const found = (await extraMethods(ctx, c.user)).find((m) => (input.method_id ? m.id === input.method_id : m.type === input.method));
  if (!found) throw notFound('Two-factor method not found', 'METHOD_NOT_FOUND');
  const refused = (reason: string) =>
    ctx.audit.recordLater({
      type: 'sign_in.failed',
      outcome: 'failure',
      userId: c.user.id,
      details: { method: 'two_factor', reason, second_factor: found.type },
    });
  const s = settings(ctx);
  const budget = await ctx.limits.consume(USER_BUCKET, c.user.id, { points: s.user_attempts, durationSec: s.user_attempts_window });
  if (!budget.allowed) {
    refused('two_factor_throttled');
    throw new AppError(429, Codes.RATE_LIMITED, 'Too many failed second-factor attempts; try again later', undefined, {
      retry_after: Math.max(1, budget.retryAfterSec),
      attempts_remaining: 0,
    });
  }
  const p = { type: found.type, user: c.user, session: c.session, client: c.client, method_id: found.id, credential: input.credential, verified: false };
  try {
    await ctx.hooks.run(EXTRA_VERIFY, p);
  } catch (err) {
    // A refusal of the proof keeps its attempt; a 429 or 503 of the provider's own is no attempt made.
    if (err instanceof AppError && err.status !== 400) await ctx.limits.refund(USER_BUCKET, c.user.id);
    refused(err instanceof AppError && err.status === 429 ? 'two_factor_throttled' : 'two_factor_failed');
    throw err;
  }
  if (!p.verified) {
    // Nobody answered (the providing module switched off meanwhile): fail closed.
    await ctx.limits.refund(USER_BUCKET, c.user.id);
    refused('two_factor_unavailable');
    throw badRequest('This two-factor method is not available now; use another method', undefined, 'METHOD_NOT_AVAILABLE');
  }
  await ctx.limits.refund(USER_BUCKET, c.user.id);
  return found;
}
