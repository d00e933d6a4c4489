import { createHmac } from 'node:crypto';
import type { Request } from 'express';
import {
  defineRoute,
  moduleEnvelope,
  type AuthMode,
  type MaybeSignedIn,
  type ModuleContext,
  type ModuleHandlerArgs,
  type ModuleRouteDef,
  type UserRecord,
} from '../../src/module-api.js';

export const MODULE_ID = 'blog';

/** The caller as the module sees it. */
export interface Caller {
  user: UserRecord | null;
  auth: Pick<MaybeSignedIn, 'user' | 'tokenSource' | 'bridge'>;
}

/**
 * The caller of an `optional-session` route (or a session route): the session's user when a valid full
 * one was sent, anonymous otherwise (core's defineRoute resolves it and checks the origin of cookie writes).
 */
export const callerOf = (auth: MaybeSignedIn): Caller => ({ user: auth.user, auth });

/** `{data, user_context, meta}`; user_context also says what the caller may do with what it got. */
export function envelope(data: unknown, caller: Caller, meta: Record<string, unknown> = {}, can?: Record<string, boolean>) {
  const e = moduleEnvelope(data, caller.auth as MaybeSignedIn, meta);
  return can ? { ...e, user_context: { ...e.user_context, can } } : e;
}

/** A keyed digest (key derived for this module), so a stored viewer key cannot be reversed to an address by trying them all. */
export function keyedDigest(ctx: ModuleContext, value: string): string {
  return createHmac('sha256', ctx.keys.derive('viewers')).update(value).digest('hex').slice(0, 48);
}

/** The client address as the core rate limiter sees it (trusted proxies applied by express). */
export const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? '';

/** What a blog route's `run` gets: the caller as the blog sees it, the parsed input, and the module's context. */
type RunArgs<Q, P, B, Who> = Pick<ModuleHandlerArgs<B, Q, P, AuthMode>, 'query' | 'params' | 'body' | 'req' | 'res' | 'ctx'> & { who: Who };

/** A route any caller may use, signed in or not; `who` is resolved from the session when one is sent. */
export function open<Q = Record<string, unknown>, P = Record<string, string>, B = undefined>(
  def: Omit<ModuleRouteDef<B, Q, P>, 'auth' | 'module' | 'handler'> & {
    run(a: RunArgs<Q, P, B, Caller>): Promise<unknown>;
  },
) {
  const { run, ...rest } = def;
  return defineRoute<B, Q, P, 'optional-session'>({
    ...rest,
    auth: 'optional-session',
    module: MODULE_ID,
    handler: ({ req, res, query, params, body, ctx, auth }) => run({ who: callerOf(auth), query, params, body, req, res, ctx }),
  });
}

/** A route for a signed-in caller (roles are checked by the service, so the refusal names what is missing). */
export function signedIn<Q = Record<string, unknown>, P = Record<string, string>, B = undefined>(
  def: Omit<ModuleRouteDef<B, Q, P>, 'auth' | 'module' | 'handler'> & {
    run(a: RunArgs<Q, P, B, Caller & { user: NonNullable<Caller['user']> }>): Promise<unknown>;
  },
) {
  const { run, ...rest } = def;
  return defineRoute<B, Q, P, 'session'>({
    ...rest,
    auth: 'session',
    module: MODULE_ID,
    handler: ({ req, res, query, params, body, ctx, auth }) => run({ who: { user: auth.user, auth }, query, params, body, req, res, ctx }),
  });
}
