import { randomUUID } from 'node:crypto';
import { Op, UniqueConstraintError } from 'sequelize';
import type { HubDb } from './hub-deps.js';
import { AppError } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { asObject } from './state-store.js';

export const LOCK_KEY = 'modules.install_lock';
/** A lock older than this was left by a process that died mid-install; it may be taken over. */
export const LOCK_TTL_MS = 10 * 60_000;

/**
 * Serialises hub operations across processes and instances with a row in the shared settings table:
 * the first insert wins, the others answer 409 INSTALL_LOCKED.
 */
export async function withInstallLock<T>(app: Pick<HubDb, 'models' | 'instanceId'>, what: string, fn: () => Promise<T>): Promise<T> {
  const { Setting } = app.models;
  const now = new Date();
  await Setting.destroy({ where: { key: LOCK_KEY, updated_at: { [Op.lt]: new Date(now.getTime() - LOCK_TTL_MS) } } });
  const holder = randomUUID();
  try {
    await Setting.create({ key: LOCK_KEY, value: { holder, instance: app.instanceId, pid: process.pid, what }, updated_at: now });
  } catch (err) {
    if (!(err instanceof UniqueConstraintError)) throw err;
    const row = await Setting.findByPk(LOCK_KEY);
    const value = asObject(row?.get('value'));
    const running = typeof value.what === 'string' ? ` (${value.what})` : '';
    throw new AppError(409, Codes.INSTALL_LOCKED, `Another module operation is running${running}; try again when it has finished`);
  }
  try {
    return await fn();
  } finally {
    const row = await Setting.findByPk(LOCK_KEY).catch(() => null);
    if (row && asObject(row.get('value')).holder === holder) await row.destroy().catch(() => undefined);
  }
}
