import { Umzug } from 'umzug';
import type { Sequelize, Transaction } from 'sequelize';
import { dialectOf } from './sequelize.js';
import { inTransaction } from './unit-of-work.js';
import type { MigrationContext, MigrationDef, MigrationSource } from './migration-types.js';

export const MIGRATIONS_TABLE = 'gatehouse_migrations';

export interface PlannedMigration {
  /** `<source>/<name>` */
  id: string;
  source: string;
  name: string;
}

export interface DryRunResult extends PlannedMigration {
  sql: string[];
}

export interface ApplyOptions {
  /** Only these sources (core, module ids). Default: all. */
  sources?: string[];
  /** Run every pending migration in one transaction: all or nothing (module installs). */
  atomic?: boolean;
  /** Run inside this caller-owned transaction (the caller commits, e.g. with its own bookkeeping rows). */
  transaction?: Transaction;
  onProgress?: (m: PlannedMigration, index: number, total: number) => void;
}

export interface Migrator {
  plan(sources?: string[]): Promise<PlannedMigration[]>;
  executed(): Promise<string[]>;
  apply(opts?: ApplyOptions): Promise<PlannedMigration[]>;
  /** Runs the pending migrations inside a transaction that is rolled back; returns the SQL each ran. */
  dryRun(sources?: string[]): Promise<DryRunResult[]>;
  /** Reverts applied migrations of one source, newest first (all of them, or `steps`). */
  down(source: string, opts?: { steps?: number; atomic?: boolean; transaction?: Transaction }): Promise<PlannedMigration[]>;
}

type Entry = PlannedMigration & { def: MigrationDef };

/**
 * Umzug orchestrates; each migration runs in a transaction together with its bookkeeping row, so a
 * failure leaves neither a half-applied migration nor a record of one.
 */
export function createMigrator(sequelize: Sequelize, getSources: () => MigrationSource[]): Migrator {
  const dialect = dialectOf(sequelize);
  const qi = sequelize.getQueryInterface();

  async function ensureTable(): Promise<void> {
    const ts = dialect === 'postgres' ? 'TIMESTAMPTZ' : 'DATETIME';
    await sequelize.query(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (name VARCHAR(255) PRIMARY KEY, source VARCHAR(64) NOT NULL, applied_at ${ts} NOT NULL)`,
    );
  }

  async function executed(): Promise<string[]> {
    await ensureTable();
    const [rows] = await sequelize.query(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY applied_at, name`);
    return (rows as { name: string }[]).map((r) => r.name);
  }

  function entries(sources?: string[]): Entry[] {
    return getSources()
      .filter((s) => !sources || sources.includes(s.id))
      .flatMap((s) =>
        [...s.migrations]
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((def) => ({ id: `${s.id}/${def.name}`, source: s.id, name: def.name, def })),
      );
  }

  async function plan(sources?: string[]): Promise<PlannedMigration[]> {
    const done = new Set(await executed());
    return entries(sources)
      .filter((e) => !done.has(e.id))
      .map(({ id, source, name }) => ({ id, source, name }));
  }


  function ctxFor(t: Transaction): MigrationContext {
    return { queryInterface: qi, sequelize, transaction: t, dialect };
  }

  function buildUmzug(list: Entry[], outer: Transaction | null, onStep?: (e: Entry) => void) {
    return new Umzug({
      migrations: list.map((e) => ({
        name: e.id,
        up: async () => {
          onStep?.(e);
          await inTransaction(sequelize, outer, async (t) => {
            await e.def.up(ctxFor(t));
            await sequelize.query(`INSERT INTO ${MIGRATIONS_TABLE} (name, source, applied_at) VALUES (?, ?, ?)`, {
              replacements: [e.id, e.source, new Date()],
              transaction: t,
            });
          });
        },
        down: async () => {
          onStep?.(e);
          await inTransaction(sequelize, outer, async (t) => {
            await e.def.down(ctxFor(t));
            await sequelize.query(`DELETE FROM ${MIGRATIONS_TABLE} WHERE name = ?`, { replacements: [e.id], transaction: t });
          });
        },
      })),
      // Bookkeeping happens inside each migration's transaction (above); umzug only asks what ran.
      storage: { executed: executed, logMigration: async () => {}, unlogMigration: async () => {} },
      logger: undefined,
    });
  }

  async function apply(opts: ApplyOptions = {}): Promise<PlannedMigration[]> {
    const pending = new Set((await plan(opts.sources)).map((p) => p.id));
    const list = entries(opts.sources).filter((e) => pending.has(e.id));
    if (!list.length) return [];
    let i = 0;
    const step = (e: Entry) => opts.onProgress?.({ id: e.id, source: e.source, name: e.name }, i++, list.length);
    const run = async (outer: Transaction | null) => {
      await buildUmzug(list, outer, step).up({ migrations: list.map((e) => e.id) });
    };
    if (opts.transaction) await run(opts.transaction);
    else if (opts.atomic) await sequelize.transaction(async (t) => run(t));
    else await run(null);
    return list.map(({ id, source, name }) => ({ id, source, name }));
  }

  async function dryRun(sources?: string[]): Promise<DryRunResult[]> {
    const pending = new Set((await plan(sources)).map((p) => p.id));
    const list = entries(sources).filter((e) => pending.has(e.id));
    if (!list.length) return [];
    const results: DryRunResult[] = [];
    const t = await sequelize.transaction();
    const options = (sequelize as Sequelize & { options: { logging?: unknown } }).options;
    const previous = options.logging;
    let current: DryRunResult | null = null;
    options.logging = (sql: string, qopts?: { transaction?: Transaction }) => {
      if (current && qopts?.transaction === t && !sql.includes(MIGRATIONS_TABLE)) {
        current.sql.push(sql.replace(/^Executing \([^)]*\):\s*/, ''));
      }
      if (typeof previous === 'function') (previous as (s: string) => void)(sql);
    };
    try {
      for (const e of list) {
        current = { id: e.id, source: e.source, name: e.name, sql: [] };
        results.push(current);
        await e.def.up(ctxFor(t));
      }
    } finally {
      options.logging = previous;
      await t.rollback();
    }
    return results;
  }

  async function down(
    source: string,
    opts: { steps?: number; atomic?: boolean; transaction?: Transaction } = {},
  ): Promise<PlannedMigration[]> {
    const done = new Set(await executed());
    const applied = entries([source]).filter((e) => done.has(e.id)).reverse();
    const list = opts.steps ? applied.slice(0, opts.steps) : applied;
    if (!list.length) return [];
    const run = async (outer: Transaction | null) => {
      // Reverting one by one, newest first, through umzug's own down().
      const umzug = buildUmzug(list, outer);
      for (const e of list) await umzug.down({ migrations: [e.id] });
    };
    if (opts.transaction) await run(opts.transaction);
    else if (opts.atomic) await sequelize.transaction(async (t) => run(t));
    else await run(null);
    return list.map(({ id, source: s, name }) => ({ id, source: s, name }));
  }

  return { plan, executed, apply, dryRun, down };
}
