import type { Logger } from '../log/logger.js';
import type { Hooks } from '../modules/hooks.js';

/**
 * Runs the handlers of an event that reports something already done (a user registered, signed in,
 * changed). The change is committed by then, so a failing handler is logged and the operation still
 * succeeds: answering 500 would make the client retry a registration that in fact went through
 * (and get 409), or think an admin change did not happen when it did.
 */
export async function runAfterHooks(hooks: Hooks, logger: Logger | undefined, event: string, payload: Record<string, unknown>): Promise<void> {
  try {
    await hooks.run(event, payload);
  } catch (err) {
    logger?.error({ event, reason: (err as Error)?.message ?? String(err) }, 'hook handler failed after the change was made');
  }
}
