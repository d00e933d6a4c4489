import { fail, ok, skip, type Check } from './check.js';

/**
 * The doctor checks installed modules declare in their manifests (doctorChecks), each run with its
 * module's context; any failure fails this check, naming the module and its check.
 */
export const moduleChecks: Check = {
  id: 'modules',
  title: 'Checks of installed modules',
  category: 'modules',
  needs: ['database', 'migrations'],
  async run(ctx) {
    const app = await ctx.app();
    const declared = app.modules
      .registry()
      .filter((m) => app.modules.isEnabled(m.id))
      .flatMap((m) => m.doctorChecks.map((c) => ({ module: m.id, check: c })));
    if (!declared.length) return skip('no installed module declares a check');
    const failed: string[] = [];
    for (const { module, check } of declared) {
      const r = await check.run(app.modules.context(module)).catch((err: Error) => ({ ok: false, message: err.message }));
      if (!r.ok) failed.push(`${module}/${check.name}: ${r.message}`);
    }
    if (failed.length) return fail(failed.join('; '), 'see the module README for what its checks need');
    return ok(`${declared.length} passed`);
  },
};
