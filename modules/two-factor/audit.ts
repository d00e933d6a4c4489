import type { MethodRow } from './store.js';

/**
 * A method's security event (core's two_factor.* family, which the second-factor provider writes):
 * the method's id and kind, never its address, secret or codes.
 */
export const methodEvent = (type: 'two_factor.method_added' | 'two_factor.method_removed', userId: string, m: Pick<MethodRow, 'id' | 'kind'>) => ({
  type,
  userId,
  details: { method: m.kind, method_id: m.id },
});
