import { QueryTypes } from 'sequelize';
import { SEARCH_COLUMNS } from '../../data/migrations/20261123-1000-add-user-list-indexes.js';
import { SEARCH_INDEX, searchIndexSql } from '../../data/migrations/20261127-0900-add-user-search-text.js';
import { dialectOf } from '../../data/sequelize.js';
import { fail, ok, warn, type Check } from './check.js';

/**
 * Admin search by substring needs pg_trgm's GIN index (on users.search_text) on PostgreSQL; without it every search
 * reads the whole users table (seconds at a million users). The migration goes on without them where
 * the extension cannot be created, so this check is where that shows, with the statements that mend it.
 */
export const searchIndexCheck: Check = {
  id: 'search-index',
  title: 'Admin search indexes (pg_trgm)',
  category: 'storage',
  needs: ['database', 'migrations'],
  async run(ctx) {
    const app = await ctx.app();
    if (dialectOf(app.sequelize) !== 'postgres') return ok('SQLite: substring search reads the users table (fine up to some 100,000 users)');
    const select = <T extends object>(sql: string) => app.sequelize.query<T>(sql, { type: QueryTypes.SELECT });
    const present = new Set((await select<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE tablename = 'users'")).map((r) => r.name));
    const indexed = present.has(SEARCH_INDEX);
    const mend = indexed ? '' : `${searchIndexSql()};`;
    const installed = await select<{ v: string }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'pg_trgm'");
    if (!installed.length) {
      const available = await select("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'");
      return available.length
        ? fail(
            'the pg_trgm extension is missing from this database: admin search reads the whole users table',
            `as a superuser (or the database owner): CREATE EXTENSION pg_trgm; ${mend}`.trim(),
          )
        : fail(
            'pg_trgm is not available on this PostgreSQL server: admin search reads the whole users table',
            `install PostgreSQL contrib (Debian: postgresql-contrib), then as a superuser: CREATE EXTENSION pg_trgm; ${mend}`.trim(),
          );
    }
    if (!indexed) {
      return warn(`pg_trgm ${installed[0].v} installed, but the search index is missing: ${SEARCH_INDEX}`, `as the database owner: ${mend}`);
    }
    return ok(`pg_trgm ${installed[0].v}; trigram index on ${SEARCH_COLUMNS.join(', ')} (users.search_text)`);
  },
};
