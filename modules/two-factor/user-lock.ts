import type { ModuleContext, Transaction } from '../../src/module-api.js';

/**
 * Runs `fn` in a transaction in which one user's two-factor changes take turns, so a check and the
 * write it allows cannot interleave with another change's (two removals of the last two methods, two
 * setups, turning 2FA on while a method goes): a transaction-scoped advisory lock on PostgreSQL; on
 * SQLite every transaction is IMMEDIATE, so writers go one at a time already. What decides must be read
 * again inside `fn`, through `tx` (on SQLite a write outside it would wait for this very transaction).
 */
export function withUserLock<T>(ctx: ModuleContext, userId: string, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  return ctx.db.transaction(async (tx) => {
    if (ctx.db.dialect === 'postgres') await ctx.db.exec('SELECT pg_advisory_xact_lock(hashtext(?))', [`two-factor:${userId}`], { tx });
    return fn(tx);
  });
}
