import { z } from 'zod';
import { defineModule } from '../../src/module-api.js';
import { createOnboardingProfiles } from './migrations/20261121-1100-create-onboarding-profiles.js';
import { routes } from './routes.js';
import { DEFAULT_STEPS, ensureProfile, eraseOnboarding, exportOnboarding } from './service.js';

const config = z.object({
  steps: z
    .array(z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a step is a lower-case name'))
    .min(1)
    .max(20)
    .refine((s) => new Set(s).size === s.length, 'steps must be unique')
    .default(DEFAULT_STEPS),
});

/** First-run onboarding: steps, completion, write-only acquisition data, business fields. */
export default defineModule({
  id: 'onboarding',
  version: '1.0.0',
  description: 'First-run onboarding: steps, completion with write-only acquisition data and team size, business fields',
  config,
  migrations: [createOnboardingProfiles],
  routes,
  hooks: [
    {
      event: 'auth.registered',
      async handler({ user }, ctx) {
        // Registration must not fail because of onboarding bookkeeping.
        await ensureProfile(ctx, user.id).catch((err) => ctx.logger.warn({ err: (err as Error).message }, 'onboarding profile not created'));
      },
    },
  ],
  tables: ['onboarding_profiles'],
  errorCodes: [{ code: 'ONBOARDING_STEP_NOT_FOUND', status: 404, description: 'The step is not one of the configured onboarding steps' }],
  // Acquisition data is write-only and lives in onboarding_profiles: a profile update never takes it.
  profileRefusals: [{ prefix: 'acquisition_', names: ['team_size_range'], message: '{field} is accepted only by POST /auth/user/me/onboarding/complete' }],
  exporters: [{ name: 'onboarding', run: exportOnboarding }],
  erasers: [{ name: 'onboarding', run: eraseOnboarding }],
});
