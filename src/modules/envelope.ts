import type { AuthState } from '../http/request-context.js';

/**
 * The modern module envelope `{data, user_context, meta}` (the module hub and modules' own routes), with `success`
 * as well so clients of the older envelopes read it too.
 */
export function moduleEnvelope<T>(data: T, auth: Pick<AuthState, 'user'>, meta: Record<string, unknown> = {}) {
  return {
    success: true as const,
    data,
    user_context: {
      authenticated: Boolean(auth.user),
      user_type: auth.user?.user_type ?? null,
      user_id: auth.user?.id ?? null,
    },
    meta,
  };
}
