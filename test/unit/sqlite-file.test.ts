import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSequelize, SQLITE_FILE } from '../../src/data/sequelize.js';

describe('embedded SQLite file', () => {
  it('when the database file is created, then only its owner can read it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-sqlite-'));
    const old = process.umask(0o022);
    try {
      const s = await createSequelize({ databaseUrl: undefined, dataDirAbs: path.join(dir, 'data') });
      await s.query('CREATE TABLE t (id INTEGER)');
      await s.close();
      expect(statSync(path.join(dir, 'data', SQLITE_FILE)).mode & 0o777).toBe(0o600);
      expect(statSync(path.join(dir, 'data')).mode & 0o007).toBe(0);
    } finally {
      process.umask(old);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('in-memory SQLite', () => {
  it('when DATABASE_URL is sqlite::memory:, then no file is created on disk', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-sqlite-mem-'));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const s = await createSequelize({ databaseUrl: 'sqlite::memory:', dataDirAbs: path.join(dir, 'data') });
      await s.query('CREATE TABLE t (id INTEGER)');
      await s.close();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
