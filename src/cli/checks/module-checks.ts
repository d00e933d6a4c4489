import { envProblems } from '../../modules/module-env.js';
import { fail, ok, skip, warn, type Check } from './check.js';

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

/** Module settings and limit budgets given in the environment that fit no reading (the server ignores them). */
export const moduleSettingsCheck: Check = {
  id: 'module-settings',
  title: 'Module settings in the environment',
  category: 'modules',
  needs: ['config'],
  async run(ctx) {
    const env = ctx.requireConfig().moduleEnv;
    const given = Object.keys(env).length;
    if (!given) return skip('none given');
    const problems = envProblems(ctx.modules, env);
    if (problems.length) return warn(problems.join('; '), 'fix or remove them: each is ignored, the stored or default value applies (see README "Modules")');
    return ok(`${given} given: ${Object.keys(env).sort().join(', ')}`);
  },
};
