import type { Sequelize, Transaction } from 'sequelize';

export type { Transaction };

/**
 * Runs `fn` once the unit of work commits (at once without one): cache invalidation, bus messages and
 * after-hooks must never announce a change a rollback then undoes. A failure there is reported to
 * `onError`, never turned into a failed commit (the data is written by then).
 */
export async function afterCommit(tx: Transaction | null | undefined, fn: () => Promise<unknown> | unknown, onError?: (err: unknown) => void): Promise<void> {
  const guarded = async () => {
    try {
      await fn();
    } catch (err) {
      if (!onError) throw err;
      onError(err);
    }
  };
  if (!tx) return guarded();
  tx.afterCommit(() => guarded().catch((err) => onError?.(err)));
}

/** What opens a unit of work: the database, or a service's `transaction` port. */
export type TransactionOpener = Pick<Sequelize, 'transaction'> | (<T>(fn: (tx: Transaction) => Promise<T>) => Promise<T>);

/** Joins the caller's unit of work, or opens one for `fn` alone. */
export function inTransaction<T>(open: TransactionOpener, tx: Transaction | null | undefined, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  if (tx) return fn(tx);
  return typeof open === 'function' ? open(fn) : open.transaction(fn);
}
