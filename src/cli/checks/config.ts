import { existsSync } from 'node:fs';
import { ConfigError } from '../../config/load-config.js';
import { fail, ok, oneLine, type Check } from './check.js';

export const configCheck: Check = {
  id: 'config',
  title: 'Configuration valid',
  category: 'config',
  withoutConfig: true,
  async run(ctx) {
    const err = ctx.configError;
    if (err instanceof ConfigError) {
      return fail(err.issues.map((i) => `${i.key} (${i.source}): ${i.message}`).join('; '), 'fix these keys; see "Configuration" in README.md');
    }
    if (err) return fail(oneLine(err.message));
    const config = ctx.requireConfig();
    return ok(existsSync(config.configFile) ? `${config.configFile} and environment` : 'environment only (no config.json)');
  },
};
