import { existsSync } from 'node:fs';
import path from 'node:path';
import { initHint, missingDatabase } from '../database-file.js';
import { fail, ok, oneLine, safeUrl, type Check } from './check.js';
import { isDatabaseUnavailable } from '../../data/db-errors.js';

export const databaseCheck: Check = {
  id: 'database',
  title: 'Database reachable',
  category: 'storage',
  preflight: ['init', 'serve'],
  async run(ctx) {
    const config = ctx.requireConfig();
    const { createSequelize, databaseProbe, sqliteFile } = await import('../../data/sequelize.js');
    const file = sqliteFile(config);
    const pg = file === null;
    // Non-null: sqliteFile(config) is null only when DATABASE_URL names PostgreSQL.
    const where = pg ? `PostgreSQL at ${safeUrl(config.databaseUrl!)}` : `SQLite at ${file}`;
    // Opening SQLite would create the directory and the file; a check must not (init makes them).
    if (file !== null && !existsSync(path.dirname(file))) return fail(`${where}: ${path.dirname(file)} does not exist`, initHint(config));
    if (ctx.readOnly && (await missingDatabase(config))) return fail(`${where}: the file does not exist`, initHint(config));
    const sequelize = await createSequelize(config);
    try {
      // One try: a check reports what it finds now (serve retries on its own).
      await sequelize.authenticate({ retry: { max: 1 } });
      // SQLite opens and reads while another process holds the write lock; writing is what matters.
      if (!pg) await databaseProbe(config, (sql) => sequelize.query(sql), 2_000)();
      return ok(where);
    } catch (err) {
      const reason = oneLine((err as Error).message);
      const result = fail(`${where}: ${reason}`, pg ? 'check DATABASE_URL and that PostgreSQL is running' : 'check that the data dir is writable');
      // Unreachable or locked may pass; refused credentials or a missing database will not.
      const lasting = (err as Error).name === 'SequelizeAccessDeniedError' || /does not exist/.test(reason);
      return { ...result, transient: isDatabaseUnavailable(err) && !lasting };
    } finally {
      await sequelize.close().catch(() => undefined);
    }
  },
};
