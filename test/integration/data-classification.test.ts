import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/data.md'), 'utf8');
const LEVELS = ['Secret', 'Personal', 'Internal', 'Public'];

/** The classified tables: each row of the "The tables" table names one or more in backticks in its first cell. */
function classified(): Map<string, string> {
  const section = doc.slice(doc.indexOf('## The tables'));
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  const out = new Map<string, string>();
  for (const row of rows) {
    const [first, , level] = row.split(' | ');
    for (const m of first.matchAll(/`([a-z_]+)(?:_\*)?`/g)) out.set(m[1], level);
  }
  return out;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  for (const m of t.app.modules.registry()) await t.app.modules.hub.install([m.id], { actor: 'test' } as never);
}, 120_000);
afterAll(async () => t?.close());

describe('docs/data.md, the data classification (ASVS 14.1.1, 14.1.2)', () => {
  it('when every module is installed, then every table is classified with a level, and every classified table exists', async () => {
    const tables = ((await t.app.sequelize.getQueryInterface().showAllTables()) as (string | { tableName: string })[])
      .map((x) => (typeof x === 'string' ? x : x.tableName))
      // SQLite's full-text index keeps shadow tables of its own (blog_posts_fts_data, …): the doc names them as blog_posts_fts_*.
      .filter((n) => !/^blog_posts_fts_/.test(n));
    const doc = classified();
    expect(tables.length).toBeGreaterThan(30);
    expect(tables.filter((n) => !doc.has(n))).toEqual([]);
    // blog_posts_fts exists on SQLite only (PostgreSQL searches blog_posts itself).
    expect([...doc.keys()].filter((n) => !tables.includes(n) && n !== 'blog_posts_fts')).toEqual([]);
    for (const [name, level] of doc)
      expect(
        LEVELS.some((l) => level.includes(l)),
        `${name}: ${level}`,
      ).toBe(true);
  });

  it('names a control for each level', () => {
    const levels = doc.slice(doc.indexOf('## Levels'), doc.indexOf('## The tables'));
    for (const l of LEVELS) expect(levels).toMatch(new RegExp(`\\| \\*\\*${l}\\*\\* \\| [^|]+ \\| [^|]{40,} \\|`));
  });
});
