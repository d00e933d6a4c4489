import { AppError } from '../../errors/app-error.js';
import { isDatabaseUnavailable } from '../../data/db-errors.js';
import { Codes } from '../../errors/codes.js';
import type { PlannedMigration } from '../../data/migrator.js';
import { hubMigrator, requireManifest, type HubDeps } from './hub-deps.js';
import { withInstallLock } from './install-lock.js';
import { planChange, type ModulePlan } from './planner.js';

export type ProgressEvent =
  | { step: 'plan'; modules: string[] }
  | { step: 'migration'; id: string; index: number; total: number; direction: 'up' | 'down' }
  | { step: 'commit' }
  | { step: 'settle'; ms: number }
  | { step: 'reload' };

export interface ChangeOptions {
  /** Who asked (recorded in module_state.info): `cli`, or `http:<user id>`. */
  actor?: string;
  onProgress?: (e: ProgressEvent) => void;
}

export interface ChangeResult {
  modules: string[];
  action: 'install' | 'update' | 'enable' | 'disable' | 'uninstall';
  /** Migrations applied (install, update) or reverted (uninstall with drop). */
  migrations: string[];
  changed: boolean;
  data_dropped?: boolean;
  /** What a forced uninstall did to make it possible (the module's uninstall guard says). */
  notices?: string[];
}

/** Refuses a plan with problems, answering with the code of its first problem. */
function assertRunnable(plans: ModulePlan[]): void {
  const problems = plans.flatMap((p) => p.problems);
  if (!problems.length) return;
  const first = problems[0];
  const status = first.code === Codes.VALIDATION_ERROR ? 400 : 409;
  // In the one `details` shape: the plan's problems concern no request field.
  throw new AppError(
    status,
    first.code,
    first.message,
    problems.map((p) => ({ field: null, message: p.message, code: p.code })),
  );
}

/** Runs `fn` in one transaction; a failure leaves nothing behind and is reported as such. */
async function atomically<T>(d: HubDeps, what: string, fn: (t: import('sequelize').Transaction) => Promise<T>): Promise<T> {
  try {
    return await d.db.sequelize.transaction(fn);
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (isDatabaseUnavailable(err)) {
      d.logger.warn({ err: (err as Error).message, what }, 'module operation could not reach the database; nothing was changed');
      throw new AppError(503, Codes.SERVICE_UNAVAILABLE, `${what}: the database is busy or unreachable; nothing was changed, try again`);
    }
    d.logger.error({ err: (err as Error).message, what }, 'module operation failed and was rolled back');
    throw new AppError(500, Codes.MODULE_INSTALL_FAILED, `${what} failed and was rolled back, nothing was changed: ${(err as Error).message}`);
  }
}

const progressOf = (o: ChangeOptions, direction: 'up' | 'down') => (m: PlannedMigration, index: number, total: number) =>
  o.onProgress?.({ step: 'migration', id: m.id, index, total, direction });

/** Installs modules (and their settings) in dependency order: migrations and state in one transaction. */
export async function install(d: HubDeps, ids: string[], o: ChangeOptions & { config?: Record<string, Record<string, unknown>> } = {}): Promise<ChangeResult> {
  return withInstallLock(d.db, `install ${ids.join(', ')}`, async () => {
    const plans = await planChange(d, 'install', ids, { execute: false, config: o.config });
    assertRunnable(plans);
    const order = plans.map((p) => p.module_id);
    o.onProgress?.({ step: 'plan', modules: order });
    const applied = await atomically(d, `Installing ${order.join(', ')}`, async (t) => {
      const done = await hubMigrator(d).apply({ sources: order, transaction: t, onProgress: progressOf(o, 'up') });
      for (const p of plans) {
        await d.store.writeState(t, {
          id: p.module_id,
          version: p.module_version,
          enabled: true,
          info: { installed_by: o.actor ?? 'unknown', migrations: done.filter((m) => m.source === p.module_id).map((m) => m.name) },
        });
        if (o.config?.[p.module_id]) await d.store.writeConfig(t, p.module_id, Object.fromEntries(p.settings.map((s) => [s.key, s.value])));
        await d.audit.record({ type: 'module.installed', details: { module: p.module_id, version: p.module_version } }, { tx: t });
      }
      o.onProgress?.({ step: 'commit' });
      await d.store.bumpRevision(t);
      return done;
    });
    o.onProgress?.({ step: 'reload' });
    await d.changed();
    return { modules: order, action: 'install', migrations: applied.map((m) => m.id), changed: true };
  });
}

/** Applies a newer manifest's pending migrations and records its version. */
export async function update(d: HubDeps, id: string, o: ChangeOptions = {}): Promise<ChangeResult> {
  return withInstallLock(d.db, `update ${id}`, async () => {
    const [plan] = await planChange(d, 'update', [id], { execute: false });
    assertRunnable([plan]);
    if (plan.up_to_date) return { modules: [id], action: 'update', migrations: [], changed: false };
    o.onProgress?.({ step: 'plan', modules: [id] });
    const applied = await atomically(d, `Updating ${id}`, async (t) => {
      const done = await hubMigrator(d).apply({ sources: [id], transaction: t, onProgress: progressOf(o, 'up') });
      const current = d.runtime.installed().find((s) => s.id === id);
      await d.store.writeState(t, { id, version: plan.module_version, enabled: current?.enabled ?? true });
      const details = { module: id, from: current?.version ?? null, to: plan.module_version, migrations: done.length };
      await d.audit.record({ type: 'module.updated', details }, { tx: t });
      o.onProgress?.({ step: 'commit' });
      await d.store.bumpRevision(t);
      return done;
    });
    await d.changed();
    return { modules: [id], action: 'update', migrations: applied.map((m) => m.id), changed: true };
  });
}

/** Switches an installed module on or off; its data and migrations are untouched. */
export async function setEnabled(d: HubDeps, id: string, enabled: boolean, o: ChangeOptions = {}): Promise<ChangeResult> {
  requireManifest(d, id);
  const action = enabled ? 'enable' : 'disable';
  return withInstallLock(d.db, `${action} ${id}`, async () => {
    const state = d.runtime.installed().find((s) => s.id === id);
    if (!state) throw new AppError(409, Codes.MODULE_NOT_INSTALLED, `Module ${id} is not installed`);
    if (state.enabled === enabled) return { modules: [id], action, migrations: [], changed: false };
    await atomically(d, `Switching ${id} ${enabled ? 'on' : 'off'}`, async (t) => {
      await d.store.writeState(t, { id, version: state.version, enabled });
      await d.audit.record({ type: 'module.toggled', details: { module: id, enabled } }, { tx: t });
      await d.store.bumpRevision(t);
    });
    o.onProgress?.({ step: 'reload' });
    await d.changed();
    return { modules: [id], action, migrations: [], changed: true };
  });
}

/**
 * Uninstalls a module. Without `dropData` only its state goes: tables, columns and their migration
 * records stay, so a reinstall finds them applied and reuses the data. With `dropData` the module's
 * migrations are reverted too — after the other instances have had time to stop reading its columns.
 * A module already uninstalled with its data kept can be purged later with `dropData`.
 */
export async function uninstall(d: HubDeps, id: string, o: ChangeOptions & { dropData?: boolean; force?: boolean } = {}): Promise<ChangeResult> {
  const m = requireManifest(d, id);
  return withInstallLock(d.db, `uninstall ${id}`, async () => {
    const state = d.runtime.installed().find((s) => s.id === id);
    const migrator = hubMigrator(d);
    const done = new Set(await migrator.executed());
    const hasData = m.migrations.some((x) => done.has(`${id}/${x.name}`));
    if (!state && !(o.dropData && hasData)) throw new AppError(409, Codes.MODULE_NOT_INSTALLED, `Module ${id} is not installed`);
    const dependents = d.runtime.installed().filter((s) => d.runtime.manifest(s.id)?.requires.includes(id));
    if (dependents.length) {
      throw new AppError(409, Codes.MODULE_DEPENDENCY_ERROR, `Module ${id} is required by ${dependents.map((s) => s.id).join(', ')}; uninstall those first`);
    }
    let guarded: { notices?: string[]; afterCommit?: () => Promise<void> } = {};
    if (state) {
      await atomically(d, `Uninstalling ${id}`, async (t) => {
        guarded = (await m.beforeUninstall?.({ ctx: d.runtime.context(id), force: Boolean(o.force), tx: t })) ?? {};
        await d.store.deleteState(t, id);
        await d.audit.record({ type: 'module.uninstalled', details: { module: id, version: state.version, data_kept: !o.dropData } }, { tx: t });
        await d.store.bumpRevision(t);
      });
      o.onProgress?.({ step: 'reload' });
      await d.changed();
      await guarded.afterCommit?.();
    }
    const told = guarded.notices?.length ? { notices: guarded.notices } : {};
    if (!o.dropData) return { modules: [id], action: 'uninstall', migrations: [], changed: Boolean(state), data_dropped: false, ...told };

    if (state) {
      o.onProgress?.({ step: 'settle', ms: d.settleMs });
      await new Promise((r) => setTimeout(r, d.settleMs));
    }
    const reverted = await atomically(d, `Dropping the data of ${id}`, async (t) => {
      const list = await migrator.down(id, { transaction: t });
      await d.store.deleteConfig(t, id);
      // A purge of a module uninstalled earlier with its data kept: the data going is the change recorded.
      if (!state) await d.audit.record({ type: 'module.uninstalled', details: { module: id, version: null, data_kept: false } }, { tx: t });
      await d.store.bumpRevision(t);
      return list;
    });
    await d.changed();
    return { modules: [id], action: 'uninstall', migrations: reverted.map((x) => x.id), changed: true, data_dropped: true, ...told };
  });
}
