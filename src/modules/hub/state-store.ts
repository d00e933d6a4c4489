import { randomUUID } from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Sequelize } from 'sequelize';
import type { SystemModels } from '../../data/models/system.models.js';
import type { SettingsRepository } from '../../data/repositories/settings-repository.js';
import { MIGRATIONS_TABLE } from '../../data/migrator.js';

/** One module_state row. */
export interface InstalledModule {
  id: string;
  version: string;
  enabled: boolean;
  installedAt: Date;
  updatedAt: Date;
  info: Record<string, unknown>;
}

/** A settings row every instance polls: it changes with every install, update, switch or uninstall. */
export const REVISION_KEY = 'modules.revision';
export const configKey = (id: string) => `module.${id}.config`;

const asBool = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true';
/** A JSON column's value as an object, whether the driver parsed it or not. */
export const asObject = (v: unknown): Record<string, unknown> => {
  if (typeof v === 'string') {
    try {
      return asObject(JSON.parse(v));
    } catch {
      return {};
    }
  }
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
};

/** module_state and the module rows of settings; reads tolerate a database that is not migrated yet. */
export function createStateStore(db: { sequelize: Sequelize; models: Pick<SystemModels, 'ModuleState'>; settings: SettingsRepository }) {
  const models = () => db.models;
  const settings = () => db.settings;

  async function tolerant<T>(fallback: T, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      // Before the core migrations run (fresh install), the tables do not exist: nothing is installed.
      if (/no such table|does not exist/i.test((err as Error).message)) return fallback;
      throw err;
    }
  }

  return {
    async readStates(): Promise<InstalledModule[]> {
      return tolerant([], async () => {
        const rows = await models().ModuleState.findAll({ order: [['installed_at', 'ASC']] });
        return rows.map((r) => {
          const v = r.get({ plain: true }) as Record<string, unknown>;
          return {
            id: String(v.module_id),
            version: String(v.version),
            enabled: asBool(v.enabled),
            installedAt: new Date(v.installed_at as string),
            updatedAt: new Date(v.updated_at as string),
            info: asObject(v.info),
          };
        });
      });
    },

    async readRevision(): Promise<string> {
      return tolerant('', async () => {
        const row = await settings().get(REVISION_KEY);
        return row ? String(asObject(row.value).rev ?? '') : '';
      });
    },

    /** Sources with applied migrations: modules whose data exists (installed, or uninstalled keeping it). */
    async readSourcesWithData(): Promise<Set<string>> {
      return tolerant(new Set<string>(), async () => {
        const [rows] = await db.sequelize.query(`SELECT DISTINCT source FROM ${MIGRATIONS_TABLE}`);
        return new Set((rows as { source: string }[]).map((r) => r.source));
      });
    },

    async readConfigs(ids: string[]): Promise<Map<string, Record<string, unknown>>> {
      const out = new Map<string, Record<string, unknown>>();
      if (!ids.length) return out;
      return tolerant(out, async () => {
        const rows = await settings().getMany(ids.map(configKey));
        for (const r of rows) out.set(r.key.slice('module.'.length, -'.config'.length), asObject(r.value));
        return out;
      });
    },

    async writeState(t: Transaction, s: { id: string; version: string; enabled: boolean; info?: Record<string, unknown> }) {
      const now = new Date();
      const existing = await models().ModuleState.findByPk(s.id, { transaction: t });
      if (existing) {
        await existing.update({ version: s.version, enabled: s.enabled, updated_at: now, ...(s.info ? { info: s.info } : {}) }, { transaction: t });
      } else {
        await models().ModuleState.create(
          { module_id: s.id, version: s.version, enabled: s.enabled, info: s.info ?? {}, installed_at: now, updated_at: now },
          { transaction: t },
        );
      }
    },

    async deleteState(t: Transaction, id: string) {
      await models().ModuleState.destroy({ where: { module_id: id }, transaction: t });
    },

    async writeConfig(t: Transaction, id: string, value: Record<string, unknown>) {
      await settings().put(configKey(id), value, { tx: t });
    },

    async deleteConfig(t: Transaction, id: string) {
      await settings().remove(configKey(id), { tx: t });
    },

    /** A new revision tells every instance (polling, or on `modules:changed`) to reload. */
    async bumpRevision(t: Transaction): Promise<string> {
      const rev = randomUUID();
      await settings().put(REVISION_KEY, { rev }, { tx: t });
      return rev;
    },
  };
}

export type StateStore = ReturnType<typeof createStateStore>;
