import { fail, ok, type Check } from './check.js';

const hint = (dataDir: string) => `run gatehouse migrate --data-dir ${dataDir} (or start with gatehouse serve --migrate)`;

export const migrationsCheck: Check = {
  id: 'migrations',
  title: 'Migrations applied',
  category: 'storage',
  preflight: ['serve'],
  needs: ['database', 'redis'],
  async run(ctx) {
    const app = await ctx.app();
    const pending = await app.migrator.plan();
    if (pending.length) {
      const n = pending.length;
      return fail(`${n} pending migration${n === 1 ? '' : 's'} (${pending[0].id}${n > 1 ? ', …' : ''})`, hint(ctx.requireConfig().dataDirAbs));
    }
    return ok(`${(await app.migrator.executed()).length} applied, none pending`);
  },
};
