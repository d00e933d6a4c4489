import { maskEmail } from '../../src/module-api.js';
import { LABELS } from './methods.js';
import type { Caller } from './service.js';
import type { MethodKind } from './store.js';

/**
 * Mails the user about a change of their two-factor settings: a failure is logged, never thrown (the
 * change it reports is done). Turning it off and an admin's reset are told by core's security notices
 * (src/audit/security-notices.ts), from the events the module writes.
 */
export async function notify(
  c: Pick<Caller, 'ctx' | 'user'>,
  event: 'enabled' | 'method_added' | 'method_removed' | 'backup_codes',
  method?: MethodKind,
): Promise<void> {
  const to = c.user.email;
  await c.ctx.mail
    .send({ to, template: 'changed', lang: c.user.lang, data: { name: c.user.name ?? undefined, [event]: '1', method: method ? LABELS[method] : undefined } })
    .catch((err: Error) => c.ctx.logger.warn({ template: 'changed', to: maskEmail(to), reason: err.message }, 'two-factor notice not sent'));
}
