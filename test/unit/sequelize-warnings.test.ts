import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { format } from 'node:util';
import type { Sequelize } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSequelize } from '../../src/data/sequelize.js';
import { sequelizeWarningFields } from '../../src/data/sequelize-warnings.js';
import { createLogger } from '../../src/log/logger.js';

/*
 * In an SQLite outage (the file locked by another process) BEGIN IMMEDIATE fails, Sequelize rolls the
 * transaction back, the ROLLBACK fails too, and Sequelize wrote "Rolling back transaction … failed with
 * error …" with console.warn: one plain-text line in a JSON log per outage (issue 52). Here BEGIN (or
 * COMMIT) fails as the lock makes it fail; the ROLLBACK that follows is SQLite's own.
 */

/** What reaches the process's console (stands for stderr): Sequelize's warning used to land here. */
const plain: string[] = [];
const realWarn = console.warn;
let dir: string;
let sequelize: Sequelize;
let logged = '';

beforeAll(async () => {
  console.warn = (...args: unknown[]) => void plain.push(format(...args));
  dir = mkdtempSync(path.join(os.tmpdir(), 'gh-seq-warn-'));
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logged += String(chunk);
      cb();
    },
  });
  sequelize = await createSequelize({ databaseUrl: undefined, dataDirAbs: dir }, createLogger('info', sink, 'json'));
  await sequelize.query('CREATE TABLE t (id INTEGER)');
});
afterAll(async () => {
  await sequelize?.close();
  console.warn = realWarn;
  rmSync(dir, { recursive: true, force: true });
});

const lines = () => logged.split('\n').filter(Boolean);
const busy = () => Object.assign(new Error('SQLITE_BUSY: database is locked'), { code: 'SQLITE_BUSY' });

describe("Sequelize's warnings go through the logger", () => {
  it('when BEGIN fails (the file locked) and the ROLLBACK after it fails, then the log has a JSON warn line and the console nothing', async () => {
    const qi = sequelize.getQueryInterface() as unknown as { startTransaction: (...a: unknown[]) => Promise<void> };
    const start = qi.startTransaction;
    qi.startTransaction = () => Promise.reject(busy());
    try {
      await expect(sequelize.transaction(async (transaction) => sequelize.query('INSERT INTO t VALUES (1)', { transaction }))).rejects.toThrow(/SQLITE_BUSY/);
    } finally {
      qi.startTransaction = start;
    }
    expect(plain).toEqual([]);
    for (const l of lines()) expect(() => JSON.parse(l), l).not.toThrow();
    const warn = lines()
      .map((l) => JSON.parse(l))
      .find((l) => l.step === 'rollback');
    expect(warn).toMatchObject({ level: 40, component: 'database', step: 'rollback', msg: 'transaction end failed; sequelize closed its connection' });
    expect(warn.reason).toMatch(/SQLITE_ERROR|no transaction/i);
    expect(warn.transaction).toEqual(expect.any(String));
  });

  it('when COMMIT fails, then the same: a JSON warn line naming the step and the error, and the error still reaches the caller', async () => {
    const qi = sequelize.getQueryInterface() as unknown as { commitTransaction: (...a: unknown[]) => Promise<void> };
    const commit = qi.commitTransaction;
    qi.commitTransaction = () => Promise.reject(busy());
    try {
      await expect(sequelize.transaction(async (transaction) => sequelize.query('INSERT INTO t VALUES (2)', { transaction }))).rejects.toThrow(/SQLITE_BUSY/);
    } finally {
      qi.commitTransaction = commit;
    }
    expect(plain).toEqual([]);
    const warn = lines()
      .map((l) => JSON.parse(l))
      .find((l) => l.step === 'commit');
    expect(warn).toMatchObject({ level: 40, step: 'commit', reason: 'SQLITE_BUSY: database is locked' });
    // The database still works after Sequelize closed that connection.
    expect((await sequelize.query('SELECT COUNT(*) AS n FROM t'))[0]).toEqual([{ n: 0 }]);
  });

  it('when something else warns, outside a commit or rollback, then it is written as before', () => {
    console.warn('someone else', 42);
    expect(plain.splice(0)).toEqual(['someone else 42']);
  });

  it('when the text is not the one expected, then it is kept whole', () => {
    expect(sequelizeWarningFields('Something new')).toEqual({ detail: 'Something new' });
    expect(
      sequelizeWarningFields('Rolling back transaction abc failed with error "x y". We are killing its connection as it is now in an undetermined state.'),
    ).toEqual({
      step: 'rollback',
      transaction: 'abc',
      reason: 'x y',
    });
  });
});
