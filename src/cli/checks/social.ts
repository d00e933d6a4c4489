import { socialProblems } from '../../social/doctor.js';
import { fail, ok, warn, type Check } from './check.js';

/** Each configured social login provider's settings (credentials, keys, endpoints). */
export const socialCheck: Check = {
  id: 'social-login',
  title: 'Social login providers',
  category: 'security',
  async run(ctx) {
    const config = ctx.requireConfig();
    const configured = Object.keys(config.socialAuth);
    const { problems, warnings } = socialProblems(config);
    const hint = 'fix SOCIAL_AUTH (see docs/social-login.md)';
    if (problems.length)
      return config.socialLogin ? fail([...problems, ...warnings].join('; '), hint) : warn(`social login is off; ${problems.join('; ')}`, hint);
    if (warnings.length) return warn(warnings.join('; '), hint);
    if (!config.socialLogin) return ok(configured.length ? `off (${configured.join(', ')} configured)` : 'off');
    return ok(`on: ${configured.join(', ')}`);
  },
};
