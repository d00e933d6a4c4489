import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import { Transaction, type Sequelize } from 'sequelize';
import type { Logger } from '../log/logger.js';

/**
 * Sequelize's own warnings, through the app's logger. A COMMIT or ROLLBACK that fails (the database
 * locked or gone: an SQLite outage, a PostgreSQL cut) makes Sequelize write one plain-text line with
 * `console.warn` ("Rolling back transaction … failed with error …. We are killing its connection …"),
 * which nothing else in the log looks like: a JSON log had one line per outage it could not parse.
 *
 * Sequelize has no option for it, so commit and rollback run in a scope that names the logger of their
 * Sequelize instance, and `console.warn` called inside that scope goes to that logger as a JSON `warn`
 * line; outside one (anyone else's warning) it writes as before.
 */

const scope = new AsyncLocalStorage<Logger>();
const loggers = new WeakMap<Sequelize, Logger>();
let installed = false;

const FAILED = /^(Committing|Rolling back) transaction (\S+) failed with error (.*?)\. We are killing its connection/s;

/** Turns Sequelize's text into fields: the step, the transaction id and the error's message. */
export function sequelizeWarningFields(text: string): Record<string, unknown> {
  const m = FAILED.exec(text);
  if (!m) return { detail: text };
  let reason: unknown = m[3];
  try {
    reason = JSON.parse(m[3]);
  } catch {
    // Kept as written.
  }
  return { step: m[1] === 'Committing' ? 'commit' : 'rollback', transaction: m[2], reason };
}

/** Sends this Sequelize instance's warnings to `logger` (see above). Idempotent per instance. */
export function routeSequelizeWarnings(sequelize: Sequelize, logger: Logger): void {
  loggers.set(sequelize, logger.child({ component: 'database' }));
  if (installed) return;
  installed = true;
  // eslint-disable-next-line no-console -- Sequelize writes its transaction warnings with console.warn and has no option for them
  const original = console.warn.bind(console);
  // eslint-disable-next-line no-console -- Sequelize writes its transaction warnings with console.warn and has no option for them
  console.warn = (...args: unknown[]) => {
    const log = scope.getStore();
    if (!log) return original(...args);
    const text = format(...args);
    log.warn(sequelizeWarningFields(text), FAILED.test(text) ? 'transaction end failed; sequelize closed its connection' : 'sequelize warning');
  };
  // commit and rollback are wrapped with their arguments passed through; the wrapper cannot restate their types.
  const proto = Transaction.prototype as unknown as Record<'commit' | 'rollback', (this: Transaction, ...a: unknown[]) => Promise<void>>;
  for (const step of ['commit', 'rollback'] as const) {
    const run = proto[step];
    proto[step] = function (this: Transaction, ...a: unknown[]) {
      const log = loggers.get((this as Transaction & { sequelize: Sequelize }).sequelize);
      return log ? scope.run(log, () => run.apply(this, a)) : run.apply(this, a);
    };
  }
}
