import { notFound } from '../errors/app-error.js';
import { defineRoute } from '../http/define-route.js';
import { oidcClientCreateBody, oidcClientParams, oidcClientUpdateBody, oidcResourceCreateBody, oidcResourceParams, oidcResourceUpdateBody } from './schemas.js';

/**
 * The OpenID provider's clients (src/oidc, docs/oidc.md): superadmins only, as the CLI's `gatehouse oidc
 * client`. A client_secret is in the answer of create and rotate-secret, and never again. And a user's
 * own consents to third-party clients, which they may revoke.
 */
const SUPERADMIN = { roles: ['superadmin'] } as const;

export const listOidcClients = defineRoute({
  method: 'get',
  path: '/auth/admin/oidc/clients',
  summary: 'List OpenID Connect clients (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  async handler({ app }) {
    return { success: true, data: { clients: await app.services.oidc.clients.list() } };
  },
});

export const createOidcClient = defineRoute({
  method: 'post',
  path: '/auth/admin/oidc/clients',
  summary: 'Register an OpenID Connect client (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  body: oidcClientCreateBody,
  async handler({ body, app }) {
    const { client, client_secret } = await app.services.oidc.clients.add(body);
    return { success: true, message: 'OIDC client registered; a secret is shown once', data: { client, client_secret } };
  },
});

export const showOidcClient = defineRoute({
  method: 'get',
  path: '/auth/admin/oidc/clients/:client_id',
  summary: 'Get an OpenID Connect client (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: oidcClientParams,
  async handler({ params, app }) {
    return { success: true, data: { client: await app.services.oidc.clients.get(params.client_id) } };
  },
});

export const updateOidcClient = defineRoute({
  method: 'patch',
  path: '/auth/admin/oidc/clients/:client_id',
  summary: 'Update an OpenID Connect client (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: oidcClientParams,
  body: oidcClientUpdateBody,
  async handler({ params, body, app }) {
    return { success: true, data: { client: await app.services.oidc.clients.update(params.client_id, body) } };
  },
});

export const rotateOidcClientSecret = defineRoute({
  method: 'post',
  path: '/auth/admin/oidc/clients/:client_id/rotate-secret',
  summary: "Rotate an OpenID Connect client's secret (admin)",
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: oidcClientParams,
  async handler({ params, app }) {
    const { client, client_secret } = await app.services.oidc.clients.rotateSecret(params.client_id);
    return { success: true, message: 'Secret replaced; the old one no longer works', data: { client, client_secret } };
  },
});

export const deleteOidcClient = defineRoute({
  method: 'delete',
  path: '/auth/admin/oidc/clients/:client_id',
  summary: 'Remove an OpenID Connect client (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: oidcClientParams,
  async handler({ params, app }) {
    await app.services.oidc.clients.remove(params.client_id);
    return { success: true, message: 'OIDC client removed' };
  },
});

/** Registered APIs (resource servers), as `gatehouse oidc resource`: superadmins only. */
export const listOidcResources = defineRoute({
  method: 'get',
  path: '/auth/admin/oidc/resources',
  summary: 'List OAuth resource servers (APIs) (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  async handler({ app }) {
    return { success: true, data: { resources: await app.services.oidc.resources.list() } };
  },
});

export const createOidcResource = defineRoute({
  method: 'post',
  path: '/auth/admin/oidc/resources',
  summary: 'Register an OAuth resource server (API) (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  body: oidcResourceCreateBody,
  async handler({ body, app }) {
    return { success: true, message: 'API registered', data: { resource: await app.services.oidc.resources.add(body) } };
  },
});

export const showOidcResource = defineRoute({
  method: 'get',
  path: '/auth/admin/oidc/resources/:identifier',
  summary: 'Get an OAuth resource server (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: oidcResourceParams,
  async handler({ params, app }) {
    return { success: true, data: { resource: await app.services.oidc.resources.get(params.identifier) } };
  },
});

export const updateOidcResource = defineRoute({
  method: 'patch',
  path: '/auth/admin/oidc/resources/:identifier',
  summary: 'Update an OAuth resource server (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: oidcResourceParams,
  body: oidcResourceUpdateBody,
  async handler({ params, body, app }) {
    return { success: true, data: { resource: await app.services.oidc.resources.update(params.identifier, body) } };
  },
});

export const deleteOidcResource = defineRoute({
  method: 'delete',
  path: '/auth/admin/oidc/resources/:identifier',
  summary: 'Remove an OAuth resource server (admin)',
  auth: SUPERADMIN,
  rateLimit: 'admin',
  params: oidcResourceParams,
  async handler({ params, app }) {
    await app.services.oidc.resources.remove(params.identifier);
    return { success: true, message: "API removed and taken off every client's allow-list" };
  },
});

export const listOwnOidcGrants = defineRoute({
  method: 'get',
  path: '/auth/user/me/oidc/grants',
  summary: 'List the apps you have granted access to',
  auth: 'session',
  async handler({ auth, app }) {
    return { success: true, data: { grants: await app.services.oidc.consents(auth.user.id) } };
  },
});

export const revokeOwnOidcGrant = defineRoute({
  method: 'delete',
  path: '/auth/user/me/oidc/grants/:client_id',
  summary: "Revoke an app's access to your account",
  auth: 'session',
  params: oidcClientParams,
  async handler({ auth, params, app }) {
    if (!(await app.services.oidc.revokeConsent(auth.user.id, params.client_id))) throw notFound('No access given to this client');
    return { success: true, message: 'Access revoked; the app must ask again' };
  },
});
