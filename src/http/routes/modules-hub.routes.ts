import type { AppContext } from '../../app-context.js';
import type { AuthState } from '../request-context.js';
import { defineRoute, type AuthMode } from '../define-route.js';
import { moduleEnvelope } from '../../modules/envelope.js';
import { moduleParams, moduleSelectionBody, moduleSettingsBody, moduleUninstallBody } from '../schemas/modules-hub.schemas.js';

/** The module hub over HTTP: admins may read, only a superadmin changes anything. */
const READ: AuthMode = { roles: ['admin', 'superadmin'] };
const WRITE: AuthMode = { roles: ['superadmin'] };
const BASE = '/api/v1/modules/install';

const idsOf = (b: { module_id?: string; modules?: string[] }) => (b.module_id ? [b.module_id] : [...new Set(b.modules)]);
const actor = (id: string) => `http:${id}`;

export const discover = defineRoute({
  method: 'get',
  path: BASE,
  summary: 'List the modules available and installed',
  auth: READ,
  rateLimit: 'admin',
  handler: ({ app, auth }) => moduleEnvelope({ modules: app.modules.hub.list() }, auth),
});

export const statusAll = defineRoute({
  method: 'get',
  path: `${BASE}/status`,
  summary: 'Status of every module (installed, enabled, problems)',
  auth: READ,
  rateLimit: 'admin',
  handler: async ({ app, auth }) => moduleEnvelope({ modules: await app.modules.hub.status() }, auth),
});

export const dryRunMany = defineRoute({
  method: 'post',
  path: `${BASE}/dry-run`,
  summary: 'Plan installing modules without changing anything',
  auth: WRITE,
  rateLimit: 'admin',
  body: moduleSelectionBody,
  async handler({ app, auth, body }) {
    const plans = await app.modules.hub.planInstall(idsOf(body), { config: body.config });
    return moduleEnvelope({ dry_run: true, ok: plans.every((p) => p.ok), plans }, auth);
  },
});

export const runMany = defineRoute({
  method: 'post',
  path: `${BASE}/run`,
  summary: 'Install modules',
  auth: WRITE,
  rateLimit: 'admin',
  body: moduleSelectionBody,
  async handler({ app, auth, body }) {
    const result = await app.modules.hub.install(idsOf(body), { config: body.config, actor: actor(auth.user.id) });
    return moduleEnvelope({ ...result, statuses: await app.modules.hub.status(result.modules) }, auth);
  },
});

export const moduleStatus = defineRoute({
  method: 'get',
  path: `${BASE}/:module_id/status`,
  summary: 'Status of one module',
  auth: READ,
  rateLimit: 'admin',
  params: moduleParams,
  handler: async ({ app, auth, params: p }) => moduleEnvelope((await app.modules.hub.status([p.module_id]))[0], auth),
});

export const moduleRegistry = defineRoute({
  method: 'get',
  path: `${BASE}/:module_id/registry`,
  summary: "One module's registry entry (manifest facts)",
  auth: READ,
  rateLimit: 'admin',
  params: moduleParams,
  handler: ({ app, auth, params: p }) => moduleEnvelope(app.modules.hub.registryEntry(p.module_id), auth),
});

export const moduleDryRun = defineRoute({
  method: 'post',
  path: `${BASE}/:module_id/dry-run`,
  summary: 'Plan installing one module without changing anything',
  auth: WRITE,
  rateLimit: 'admin',
  params: moduleParams,
  body: moduleSettingsBody,
  async handler({ app, auth, params: p, body }) {
    const [plan] = await app.modules.hub.planInstall([p.module_id], { config: body?.config ? { [p.module_id]: body.config } : undefined });
    return moduleEnvelope(plan, auth);
  },
});

/** A run answers with the module's status after it, plus what changed. */
async function statusAfter(app: AppContext, id: string, result: object, auth: AuthState) {
  const [status] = await app.modules.hub.status([id]);
  return moduleEnvelope({ ...status, result }, auth);
}

export const moduleRun = defineRoute({
  method: 'post',
  path: `${BASE}/:module_id/run`,
  summary: 'Install one module',
  auth: WRITE,
  rateLimit: 'admin',
  params: moduleParams,
  body: moduleSettingsBody,
  async handler({ app, auth, params: p, body }) {
    const config = body?.config ? { [p.module_id]: body.config } : undefined;
    const result = await app.modules.hub.install([p.module_id], { config, actor: actor(auth.user.id) });
    return statusAfter(app, p.module_id, result, auth);
  },
});

export const updateDryRun = defineRoute({
  method: 'post',
  path: `${BASE}/:module_id/update/dry-run`,
  summary: 'Plan updating one module without changing anything',
  auth: WRITE,
  rateLimit: 'admin',
  params: moduleParams,
  handler: async ({ app, auth, params: p }) => moduleEnvelope(await app.modules.hub.planUpdate(p.module_id), auth),
});

export const update = defineRoute({
  method: 'post',
  path: `${BASE}/:module_id/update`,
  summary: 'Update one module (run its new migrations)',
  auth: WRITE,
  rateLimit: 'admin',
  params: moduleParams,
  async handler({ app, auth, params: p }) {
    const result = await app.modules.hub.update(p.module_id, { actor: actor(auth.user.id) });
    return statusAfter(app, p.module_id, result, auth);
  },
});

export const enable = defineRoute({
  method: 'post',
  path: `${BASE}/:module_id/enable`,
  summary: 'Switch an installed module on',
  auth: WRITE,
  rateLimit: 'admin',
  params: moduleParams,
  async handler({ app, auth, params: p }) {
    return statusAfter(app, p.module_id, await app.modules.hub.enable(p.module_id, { actor: actor(auth.user.id) }), auth);
  },
});

export const disable = defineRoute({
  method: 'post',
  path: `${BASE}/:module_id/disable`,
  summary: 'Switch an installed module off (its data stays)',
  auth: WRITE,
  rateLimit: 'admin',
  params: moduleParams,
  async handler({ app, auth, params: p }) {
    return statusAfter(app, p.module_id, await app.modules.hub.disable(p.module_id, { actor: actor(auth.user.id) }), auth);
  },
});

export const uninstall = defineRoute({
  method: 'post',
  path: `${BASE}/:module_id/uninstall`,
  summary: 'Uninstall a module',
  auth: WRITE,
  rateLimit: 'admin',
  params: moduleParams,
  body: moduleUninstallBody,
  async handler({ app, auth, params: p, body }) {
    const result = await app.modules.hub.uninstall(p.module_id, {
      dropData: body?.drop_data === true,
      force: body?.force === true,
      actor: actor(auth.user.id),
    });
    return statusAfter(app, p.module_id, result, auth);
  },
});
