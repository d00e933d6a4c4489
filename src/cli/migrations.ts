import type { AppContext } from '../app-context.js';
import type { PlannedMigration } from '../data/migrator.js';
import { MigrationLockedError, withMigrationLock } from '../data/migration-lock.js';
import { CliError } from './errors.js';
import { count, type Ui } from './ui.js';

/**
 * Applies every pending migration as one titled task with per-migration progress, holding the
 * migration lock. `atomic`: all in one transaction, so a failure leaves the schema as it was.
 */
export async function applyMigrations(app: AppContext, ui: Ui, opts: { atomic?: boolean } = {}): Promise<PlannedMigration[]> {
  const pending = await app.migrator.plan();
  if (!pending.length) return [];
  const applied = await withMigrationLock(app, `migrating ${count(pending.length, 'migration')}`, () =>
    ui.task(
      `Applying ${count(pending.length, 'migration')}`,
      (progress) => app.migrator.apply({ atomic: opts.atomic, onProgress: (m, i, total) => progress(`${i + 1}/${total} ${m.id}`) }),
      (r) => `${r.length} applied`,
    ),
  ).catch((err: unknown) => {
    if (err instanceof MigrationLockedError) {
      const hint =
        err.state.alive === false
          ? `make sure nothing is migrating, then clear it: gatehouse migrate --unlock --data-dir ${app.config.dataDirAbs}`
          : `wait for it to finish; if that process is gone, clear the lock: gatehouse migrate --unlock --data-dir ${app.config.dataDirAbs}`;
      throw new CliError(err.message, hint);
    }
    throw err;
  });
  // Installed modules' state lives in tables a migration may just have created.
  await app.modules.reload();
  // The OpenID provider's signing keys, made at init and at the upgrade that adds its tables (else on first use).
  await app.services.oidc.ensureKeys();
  return applied;
}
