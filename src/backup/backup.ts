import { chmodSync, closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AppContext } from '../app-context.js';
import { pgDump, sqliteBackup } from './database-dump.js';
import { run, sha256File } from './tools.js';

export const BACKUP_FORMAT = 'gatehouse-backup';
export const MANIFEST = 'manifest.json';
export const DB_SQLITE = 'database.sqlite';
export const DB_PGDUMP = 'database.pgdump';

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: 1;
  gatehouse_version: string;
  created_at: string;
  dialect: 'sqlite' | 'postgres';
  migrations: string[];
  /** sha256 of every other file in the archive, by its path inside it. */
  files: Record<string, string>;
}

export interface BackupResult {
  file: string;
  sha256: string;
  bytes: number;
  manifest: BackupManifest;
}

function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return listFiles(full, base);
    return e.isFile() ? [path.relative(base, full)] : [];
  });
}

/**
 * Writes a backup archive (tar.gz): the database (SQLite through its online backup API, PostgreSQL
 * through pg_dump), config.json, the environment file it names, the uploaded pictures, and a manifest
 * with the sha256 of each. The archive is written beside its final name and renamed, so a failed
 * backup never leaves a truncated file that looks complete. Mode 0600: it holds secrets.
 */
export async function createBackup(app: AppContext, out: string, version: string, progress: (s: string) => void = () => {}): Promise<BackupResult> {
  const { config } = app;
  const stage = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-backup-'));
  try {
    progress('database');
    const db = path.join(stage, app.dialect === 'sqlite' ? DB_SQLITE : DB_PGDUMP);
    if (app.dialect === 'sqlite') await sqliteBackup(app.sequelize, db);
    // Non-null: the postgres dialect comes only from a DATABASE_URL (createSequelize).
    else await pgDump(config.databaseUrl!, db);
    // It holds password hashes; tar keeps the mode, so whoever unpacks the archive gets it owner-only.
    chmodSync(db, 0o600);

    progress('configuration and files');
    if (existsSync(config.configFile)) cpSync(config.configFile, path.join(stage, 'config.json'));
    if (config.envFile && existsSync(config.envFile)) cpSync(config.envFile, path.join(stage, 'gatehouse.env'));
    const pictures = app.services.pictures.dir;
    if (existsSync(pictures)) cpSync(pictures, path.join(stage, 'pictures'), { recursive: true });

    progress('checksums');
    const files: Record<string, string> = {};
    for (const f of listFiles(stage).sort()) files[f] = await sha256File(path.join(stage, f));
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      format_version: 1,
      gatehouse_version: version,
      created_at: new Date().toISOString(),
      dialect: app.dialect,
      migrations: await app.migrator.executed(),
      files,
    };
    writeFileSync(path.join(stage, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);

    progress('archive');
    mkdirSync(path.dirname(out), { recursive: true, mode: 0o700 });
    const partial = `${out}.partial`;
    // Created owner-only before tar writes into it (tar keeps an existing file's mode): never readable by others, not even while written.
    closeSync(openSync(partial, 'w', 0o600));
    chmodSync(partial, 0o600);
    await run('tar', ['-czf', partial, '-C', stage, '.'], { missing: 'tar' });
    renameSync(partial, out);
    return { file: out, sha256: await sha256File(out), bytes: statSync(out).size, manifest };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Where a backup goes without --out: `<data dir>/backups/gatehouse-<version>-<time>.tar.gz`. */
export function defaultBackupFile(dataDirAbs: string, version: string, what = 'backup'): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return path.join(dataDirAbs, 'backups', `gatehouse-${what}-${version}-${stamp}.tar.gz`);
}
