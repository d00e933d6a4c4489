import type { SessionRepository } from '../data/repositories/session-repository.js';
import type { UserRepository } from '../data/repositories/user-repository.js';
import type { PasswordHasher } from '../services/security/passwords.js';
import type { Metrics } from './metrics.js';

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

/** The password hasher with each hash and verification timed (gatehouse_bcrypt_duration_seconds). */
export function timedHasher(inner: PasswordHasher, metrics: Metrics): PasswordHasher {
  return {
    async hash(password) {
      const start = process.hrtime.bigint();
      try {
        return await inner.hash(password);
      } finally {
        metrics.passwordHash(seconds(start));
      }
    },
    async verify(password, hash, abandoned) {
      const start = process.hrtime.bigint();
      try {
        return await inner.verify(password, hash, abandoned);
      } finally {
        metrics.passwordHash(seconds(start));
      }
    },
  };
}

/** Active sessions are counted exactly up to this many, then estimated by PostgreSQL's planner. */
export const ACTIVE_SESSIONS_EXACT = 100_000;

/**
 * Active sessions and users are counted in the database when scraped, not kept up to date on every
 * change. Sessions exactly up to ACTIVE_SESSIONS_EXACT, then the planner's estimate: a scrape every 15 s
 * must not count ten million rows each time.
 */
export function watchCounts(metrics: Metrics, repos: { users: UserRepository; sessions: SessionRepository }, clock: () => Date = () => new Date()): void {
  metrics.onScrape(async () => metrics.activeSessions.set((await repos.sessions.countActiveCapped(clock(), ACTIVE_SESSIONS_EXACT)).total));
  metrics.onScrape(async () => metrics.users.set(await repos.users.count()));
}
