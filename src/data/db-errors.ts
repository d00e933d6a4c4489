/**
 * Errors that mean "the database cannot be reached or is not answering right now", as opposed to a
 * bad query or a constraint: connection refused or dropped, pool exhausted waiting for a connection,
 * the server shutting down or starting up, SQLite locked past its busy timeout. The HTTP layer
 * answers them 503 with Retry-After, and login does not count them against the account.
 */
const SEQUELIZE_NAMES = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeConnectionTimedOutError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
  'SequelizeAccessDeniedError',
  'SequelizeConnectionAcquireTimeoutError',
  'ConnectionAcquireTimeoutError',
]);
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01–57P03 (shutdown, cannot connect now), 53300 (too many connections). */
const PG_STATE = /^(08\d{3}|57P0[1-3]|53300)$/;
const MESSAGES = /Connection terminated|connection is closed|Client has encountered a connection error|SQLITE_BUSY|database is locked|terminating connection/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as Record<string, unknown> | undefined, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    if (typeof e.name === 'string' && SEQUELIZE_NAMES.has(e.name)) return true;
    // The breaker's own refusal (db-health.ts): the outage is known, nothing was sent.
    if (e.code === 'DB_UNAVAILABLE') return true;
    if (typeof e.code === 'string' && (NET_CODES.has(e.code) || PG_STATE.test(e.code) || e.code === 'SQLITE_BUSY')) return true;
    if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
    // Sequelize wraps the driver's error as `parent` / `original`.
    e = (e.parent ?? e.original) as Record<string, unknown> | undefined;
  }
  return false;
}

/** SQLite refused a lock ("database is locked", SQLITE_BUSY), on the driver's error or Sequelize's wrapping of it. */
export function isLockBusy(err: unknown): boolean {
  for (let e = err as Record<string, unknown> | undefined, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    if (e.code === 'SQLITE_BUSY' || (typeof e.message === 'string' && /SQLITE_BUSY|database is locked/i.test(e.message))) return true;
    e = (e.parent ?? e.original) as Record<string, unknown> | undefined;
  }
  return false;
}

/**
 * A unique index refused the write (two writers passed the same check at once), on either dialect:
 * Sequelize's UniqueConstraintError, or the driver's own error when it arrives unwrapped (PostgreSQL
 * SQLSTATE 23505, SQLite's UNIQUE constraint).
 */
export function isUniqueViolation(err: unknown): boolean {
  for (let e = err as Record<string, unknown> | undefined, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    if (e.name === 'SequelizeUniqueConstraintError' || e.code === '23505') return true;
    if (e.code === 'SQLITE_CONSTRAINT' && typeof e.message === 'string' && /UNIQUE constraint failed/i.test(e.message)) return true;
    e = (e.parent ?? e.original) as Record<string, unknown> | undefined;
  }
  return false;
}
