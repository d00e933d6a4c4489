import { existsSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { CliError } from './errors.js';

/**
 * The SQLite file the configuration names, when it does not exist yet: opening the database would
 * create it (an empty file in a wrong data dir). null for PostgreSQL, `:memory:` or an existing file.
 */
export async function missingDatabase(config: Config): Promise<string | null> {
  // Imported lazily like the rest of the data layer, so --help stays fast.
  const { sqliteFile } = await import('../data/sequelize.js');
  const file = sqliteFile(config);
  return file === null || file === ':memory:' || existsSync(file) ? null : file;
}

/** The command that sets up a data dir, for hints. */
export const initHint = (config: Pick<Config, 'dataDirAbs'>) =>
  `set it up with gatehouse init --data-dir ${config.dataDirAbs} (or point --data-dir at the existing one)`;

/** Refuses (creating nothing) when there is no database to open. */
export async function requireDatabase(config: Config): Promise<void> {
  const file = await missingDatabase(config);
  if (file) throw new CliError(`no Gatehouse database at ${file}`, initHint(config));
}
