import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../app-context.js';
import { BACKUP_FORMAT, DB_PGDUMP, DB_SQLITE, MANIFEST, type BackupManifest } from './backup.js';
import { pgRestore, sqliteRestore } from './database-dump.js';
import { run, sha256File } from './tools.js';

/** The archive is damaged, not a Gatehouse backup, or from another database kind. */
export class BackupInvalidError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupInvalidError';
  }
}

export interface OpenedBackup {
  dir: string;
  manifest: BackupManifest;
  close(): void;
}

/** Unpacks an archive into a temp dir and checks every file against the manifest's sha256. */
export async function openBackup(file: string): Promise<OpenedBackup> {
  if (!existsSync(file)) throw new BackupInvalidError(`${file} does not exist`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-restore-'));
  const close = () => rmSync(dir, { recursive: true, force: true });
  try {
    await run('tar', ['-xzf', file, '-C', dir], { missing: 'tar' }).catch((err: Error) => {
      throw new BackupInvalidError(`${file} is not a readable archive (${err.message})`);
    });
    let manifest: BackupManifest;
    try {
      manifest = JSON.parse(readFileSync(path.join(dir, MANIFEST), 'utf8')) as BackupManifest;
    } catch {
      throw new BackupInvalidError(`${file} is not a Gatehouse backup (no readable ${MANIFEST})`);
    }
    if (manifest.format !== BACKUP_FORMAT || manifest.format_version !== 1) throw new BackupInvalidError(`${file} is not a Gatehouse backup of a known format`);
    for (const [name, sum] of Object.entries(manifest.files ?? {})) {
      const p = path.join(dir, name);
      if (!existsSync(p) || (await sha256File(p)) !== sum) throw new BackupInvalidError(`${file} is damaged: ${name} does not match its checksum`);
    }
    return { dir, manifest, close };
  } catch (err) {
    close();
    throw err;
  }
}

export interface RestoreOptions {
  /** Keep this data dir's config.json instead of the one in the backup. */
  keepConfig?: boolean;
}

/**
 * Puts a backup's database, pictures and (unless kept) config.json in place. The database must be
 * of the kind the backup was made from. The current config.json, if any, is kept beside as
 * config.json.before-restore; the backup's environment file is written as gatehouse.env.from-backup
 * (where the service reads it from, /etc, is the operator's to change).
 */
export async function restoreBackup(app: AppContext, backup: OpenedBackup, opts: RestoreOptions = {}): Promise<string[]> {
  const { manifest, dir } = backup;
  const { config } = app;
  if (manifest.dialect !== app.dialect) {
    throw new BackupInvalidError(`the backup holds a ${manifest.dialect} database, this instance uses ${app.dialect}`);
  }
  const done: string[] = [];
  if (app.dialect === 'sqlite') await sqliteRestore(app.sequelize, path.join(dir, DB_SQLITE));
  // Non-null: the postgres dialect comes only from a DATABASE_URL (createSequelize).
  else await pgRestore(config.databaseUrl!, path.join(dir, DB_PGDUMP));
  done.push(`database (${manifest.migrations.length} migrations applied in it)`);

  const pictures = app.services.pictures.dir;
  rmSync(pictures, { recursive: true, force: true });
  if (existsSync(path.join(dir, 'pictures'))) cpSync(path.join(dir, 'pictures'), pictures, { recursive: true });
  done.push('pictures');

  if (!opts.keepConfig && existsSync(path.join(dir, 'config.json'))) {
    // Only a config.json that was there is kept aside, and only then is it named.
    const kept = existsSync(config.configFile);
    if (kept) renameSync(config.configFile, `${config.configFile}.before-restore`);
    cpSync(path.join(dir, 'config.json'), config.configFile);
    done.push(kept ? 'config.json (the previous one is config.json.before-restore)' : 'config.json');
  }
  if (existsSync(path.join(dir, 'gatehouse.env'))) {
    cpSync(path.join(dir, 'gatehouse.env'), path.join(config.dataDirAbs, 'gatehouse.env.from-backup'));
    done.push('environment file, as gatehouse.env.from-backup in the data dir');
  }
  return done;
}
