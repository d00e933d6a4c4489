import { randomUUID } from 'node:crypto';
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
export async function withInstallLock<T>(app: Pick<HubDb, 'settings' | 'instanceId'>, what: string, fn: () => Promise<T>): Promise<T> {
  const settings = app.settings;
  await settings.remove(LOCK_KEY, { olderThan: new Date(Date.now() - LOCK_TTL_MS) });
  const holder = randomUUID();
  if (!(await settings.claim(LOCK_KEY, { holder, instance: app.instanceId, pid: process.pid, what }))) {
    const value = asObject((await settings.get(LOCK_KEY))?.value);
    const running = typeof value.what === 'string' ? ` (${value.what})` : '';
    throw new AppError(409, Codes.INSTALL_LOCKED, `Another module operation is running${running}; try again when it has finished`);
  }
  try {
    return await fn();
  } finally {
    await settings.removeIf(LOCK_KEY, (v) => asObject(v).holder === holder).catch(() => undefined);
  }
}
