import { z } from 'zod';
import { defineRoute, moduleEnvelope } from '../../src/module-api.js';
import { complete, finishStep, getState, start } from './service.js';

const MODULE = 'onboarding';
const stepParams = z.object({ step: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be a step name') });
/** Bodies are checked field by field in the service (write-only, business, unknown keys). */
const anyObject = z.record(z.string(), z.unknown(), 'Body must be a JSON object');

/** POST /auth/user/me/onboarding/complete: first-run completion (acquisition data is write-only). */
export const completeFirstRun = defineRoute({
  method: 'post',
  path: '/auth/user/me/onboarding/complete',
  summary: 'Complete first-run onboarding (profile and sign-up answers)',
  auth: 'session',
  module: MODULE,
  body: anyObject,
  async handler({ ctx, auth, body }) {
    const { user } = await complete(ctx, auth.user, body);
    return { success: true, message: 'Onboarding completed', data: { user } };
  },
});

export const state = defineRoute({
  method: 'get',
  path: '/api/v1/onboarding',
  summary: 'Your onboarding progress',
  auth: 'session',
  module: MODULE,
  handler: async ({ ctx, auth }) => moduleEnvelope(await getState(ctx, auth.user.id), auth),
});

export const startOnboarding = defineRoute({
  method: 'post',
  path: '/api/v1/onboarding/start',
  summary: 'Start onboarding',
  auth: 'session',
  module: MODULE,
  handler: async ({ ctx, auth }) => moduleEnvelope(await start(ctx, auth.user.id), auth),
});

export const completeStep = defineRoute({
  method: 'post',
  path: '/api/v1/onboarding/steps/:step/complete',
  summary: 'Complete an onboarding step',
  auth: 'session',
  module: MODULE,
  params: stepParams,
  body: anyObject.optional(),
  async handler({ ctx, auth, params, body }) {
    // Step data as `{data: {...}}`, or the body itself.
    const onlyData = body && Object.keys(body).length === 1 && body.data && typeof body.data === 'object' && !Array.isArray(body.data);
    const data = onlyData ? body.data : body && Object.keys(body).length ? body : undefined;
    return moduleEnvelope(await finishStep(ctx, auth.user, params.step, 'complete', data), auth);
  },
});

export const skipStep = defineRoute({
  method: 'post',
  path: '/api/v1/onboarding/steps/:step/skip',
  summary: 'Skip an onboarding step',
  auth: 'session',
  module: MODULE,
  params: stepParams,
  handler: async ({ ctx, auth, params }) => moduleEnvelope(await finishStep(ctx, auth.user, params.step, 'skip'), auth),
});

export const completeOnboarding = defineRoute({
  method: 'post',
  path: '/api/v1/onboarding/complete',
  summary: 'Finish onboarding',
  auth: 'session',
  module: MODULE,
  body: anyObject.optional(),
  async handler({ ctx, auth, body }) {
    const { user, state: s } = await complete(ctx, auth.user, body ?? {});
    return moduleEnvelope(s, auth, { user });
  },
});

export const routes = [completeFirstRun, state, startOnboarding, completeStep, skipStep, completeOnboarding];
