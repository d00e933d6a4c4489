import { weakness } from '../../config/secret-strength.js';
import { fail, ok, warn, type Check } from './check.js';

export { MIN_SECRET_LENGTH, weakness } from '../../config/secret-strength.js';

const FIX = 'set a random value, e.g. openssl rand -base64 32 (gatehouse init generates both in config.json)';

export const secretsCheck: Check = {
  id: 'secrets',
  title: 'Secrets set and strong',
  category: 'security',
  async run(ctx) {
    const config = ctx.requireConfig();
    const problems: string[] = [];
    const warnings: string[] = [];
    if (!config.bridgeSecret) problems.push('BRIDGE_VALIDATION_SECRET is not set');
    else {
      const w = weakness(config.bridgeSecret);
      if (w) problems.push(`BRIDGE_VALIDATION_SECRET is ${w}`);
    }
    if (!config.cookieSecret) problems.push('COOKIE_SECRET is not set');
    else {
      const w = weakness(config.cookieSecret);
      if (w) warnings.push(`COOKIE_SECRET is ${w}`);
    }
    if (problems.length) return fail([...problems, ...warnings].join('; '), FIX);
    if (warnings.length) return warn(warnings.join('; '), FIX);
    return ok('BRIDGE_VALIDATION_SECRET and COOKIE_SECRET set');
  },
};
