import type { AppContext } from '../app-context.js';
import type { PlannedMigration } from '../data/migrator.js';
import type { Ui } from './ui.js';

/** Applies every pending migration as one titled task with per-migration progress. */
export async function applyMigrations(app: AppContext, ui: Ui): Promise<PlannedMigration[]> {
  const pending = await app.migrator.plan();
  if (!pending.length) return [];
  const n = pending.length;
  const applied = await ui.task(
    `Applying ${n} migration${n === 1 ? '' : 's'}`,
    (progress) => app.migrator.apply({ onProgress: (m, i, total) => progress(`${i + 1}/${total} ${m.id}`) }),
    (r) => `${r.length} applied`,
  );
  // Installed modules' state lives in tables a migration may just have created.
  await app.modules.reload();
  return applied;
}
