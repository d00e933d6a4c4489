import { fail, ok, warn, type Check } from './check.js';

export const MIN_SECRET_LENGTH = 32;

// Placeholders people paste from examples; a secret containing one was not generated.
const PLACEHOLDERS = ['changeme', 'change-me', 'change_me', 'replace-me', 'replaceme', 'your-secret', 'yoursecret', 'example', 'secret123', 'password'];

/** Why a secret is weak, or null. */
export function weakness(value: string): string | null {
  if (value.length < MIN_SECRET_LENGTH) return `shorter than ${MIN_SECRET_LENGTH} characters`;
  const lower = value.toLowerCase();
  const placeholder = PLACEHOLDERS.find((p) => lower.includes(p));
  if (placeholder) return `contains the placeholder "${placeholder}"`;
  if (new Set(value).size < 10) return 'too few distinct characters';
  return null;
}

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
