import { isDatabaseUnavailable } from '../data/db-errors.js';
import type { Logger } from '../log/logger.js';

/** The same unhandled failure is logged at most once in this window (a loop must not flood the journal). */
const REPEAT_MS = 60_000;
const NET_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Process-wide last resort for a serving process. A promise that rejects with nobody listening is a
 * bug, but not one worth every client's connection: it is logged (with its stack, at most once a
 * minute per message) and the process keeps serving; by default Node would exit. An exception thrown
 * from a connection's event (a database or Redis socket that went away) is survived the same way;
 * any other uncaught exception leaves the process in an unknown state, so it is logged and the
 * process exits 1 for its supervisor to restart it. Returns the uninstaller.
 */
export function installLastResort(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): () => void {
  const seen = new Map<string, number>();
  const firstInWindow = (key: string) => {
    const now = Date.now();
    const last = seen.get(key);
    if (last !== undefined && now - last < REPEAT_MS) return false;
    if (seen.size > 1000) seen.clear();
    seen.set(key, now);
    return true;
  };
  const onRejection = (reason: unknown) => {
    const err = reason instanceof Error ? reason : new Error(String(reason));
    if (firstInWindow(`rejection:${err.message}`))
      logger.error({ err }, 'unhandled promise rejection (a bug; the request it belonged to was answered or dropped): still serving');
  };
  const onException = (err: Error) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (isDatabaseUnavailable(err) || (code !== undefined && NET_CODES.has(code))) {
      if (firstInWindow(`exception:${err.message}`)) logger.error({ err }, 'uncaught connection error: still serving');
      return;
    }
    logger.fatal({ err }, 'uncaught exception: exiting for the supervisor to restart the process');
    exit(1);
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
