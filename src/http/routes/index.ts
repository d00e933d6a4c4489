import type { AnyRouteDef } from '../define-route.js';
import * as health from './health.routes.js';
import * as auth from './auth.routes.js';
import * as sessions from './session.routes.js';
import * as profile from './profile.routes.js';
import * as adminUsers from './admin-users.routes.js';
import * as picture from './picture.routes.js';
import * as password from './password.routes.js';
import * as verification from './verification.routes.js';
import * as emailChange from './email-change.routes.js';
import * as tokenLogin from './token-login.routes.js';
import * as hub from './modules-hub.routes.js';
import * as social from '../../social/routes.js';
import * as metrics from './metrics.routes.js';
import * as openapi from '../openapi/openapi.routes.js';
import * as limits from './limits.routes.js';
import * as audit from './audit.routes.js';
import * as webhooks from './webhooks.routes.js';
import * as oidc from '../../oidc/routes.js';
import * as ownSessions from './own-sessions.routes.js';

/** The table of contents of the core API: one line per route. */
export const coreRoutes: AnyRouteDef[] = [
  health.liveness, // GET /health
  health.readiness, // GET /ready
  metrics.metrics, // GET /metrics
  openapi.openApiDocument(() => coreRoutes), // GET /openapi.json (and the reference page at /docs, create-app.ts)
  auth.login, // POST /auth/login
  auth.logout, // POST /auth/logout
  auth.registerPublic, // POST /auth/register/public
  auth.register, // POST /auth/register
  auth.me, // GET /auth/me
  profile.userMe, // GET /auth/user/me
  profile.updateUserMe, // PUT /auth/user/me
  profile.updateProfileLegacy, // PUT /auth/profile
  profile.updateProfileLegacyPost, // POST /auth/profile
  audit.ownSecurityEvents, // GET /auth/user/me/security-events
  ownSessions.listOwnSessions, // GET /auth/user/me/sessions
  ownSessions.revokeOtherOwnSessions, // POST /auth/user/me/sessions/revoke-others
  ownSessions.revokeOwnSession, // DELETE /auth/user/me/sessions/:id
  emailChange.requestEmailChange, // POST /auth/user/me/email
  emailChange.confirmEmailChange, // POST /auth/user/me/email/confirm
  emailChange.confirmEmailChangeLink, // GET /auth/user/me/email/confirm
  sessions.validation, // GET /auth/validation
  sessions.validationPost, // POST /auth/validation
  sessions.refresh, // POST /auth/refresh
  sessions.sessionCurrent, // GET /auth/session/current
  sessions.bridgeValidate, // POST /auth/bridge/validate
  sessions.invalidateMe, // POST /auth/invalidate/me
  adminUsers.listUsers, // GET /auth/admin/users
  adminUsers.getUser, // GET /auth/admin/users/:id
  adminUsers.createUser, // POST /auth/admin/users
  adminUsers.updateUser, // PUT /auth/admin/users/:id
  adminUsers.deleteUser, // DELETE /auth/admin/users/:id
  adminUsers.revokeSessionPost, // POST /auth/admin/users/:id/sessions/:sessionId/revoke
  adminUsers.revokeSession, // DELETE /auth/admin/users/:id/sessions/:sessionId
  adminUsers.revokeAllSessions, // DELETE /auth/admin/users/:id/sessions
  audit.listAuditEvents, // GET /auth/admin/audit-events
  adminUsers.listUsersAlias, // GET /auth/users
  adminUsers.getUserAlias, // GET /auth/users/:id
  adminUsers.createUserAlias, // POST /auth/users
  adminUsers.updateUserAlias, // PUT /auth/users/:id
  adminUsers.deleteUserAlias, // DELETE /auth/users/:id
  picture.upload, // POST /auth/upload/picture
  picture.remove, // DELETE /auth/upload/picture
  password.requestReset, // POST /auth/password-reset/request
  password.validateReset, // POST /auth/password-reset/validate
  password.validateResetLegacy, // GET /auth/password-reset/validate/:token
  password.completeReset, // POST /auth/password-reset/complete
  password.completeResetLegacy, // POST /auth/password-reset/reset
  password.changeOwnPassword, // POST /auth/password-change/self
  password.changePasswordByAdmin, // POST /auth/password-change/admin
  verification.resendVerification, // POST /auth/resend-verification
  verification.verifyEmailLink, // GET /auth/token/verify
  tokenLogin.requestTokenLogin, // POST /auth/token/login
  tokenLogin.validateTokenLogin, // POST /auth/token/validate
  tokenLogin.validateTokenLoginGet, // GET /auth/token/validate
  social.socialProviders, // GET /auth/social/providers
  social.socialAccounts, // GET /auth/social/accounts
  social.socialUnlink, // DELETE /auth/social/accounts/:provider
  social.adminSocialAccounts, // GET /auth/admin/users/:user_id/social-accounts
  social.adminSocialUnlink, // DELETE /auth/admin/users/:user_id/social-accounts/:provider
  social.socialLogin, // GET /auth/social/:provider/login
  social.socialCallback, // GET /auth/social/:provider/callback
  social.socialCallbackPost, // POST /auth/social/:provider/callback (Apple's form_post)
  social.socialLoginApi, // POST /auth/social/:provider/login-api
  limits.resetLimitsLocal, // POST /internal/limits/reset (gatehouse limits reset, from the server's host only)
  limits.forgetSessionsLocal, // POST /internal/sessions/forget (gatehouse sessions revoke without Redis, likewise)
  webhooks.listWebhooks, // GET /auth/admin/webhooks
  webhooks.createWebhook, // POST /auth/admin/webhooks
  webhooks.retryWebhook, // POST /auth/admin/webhooks/deliveries/:id/retry
  webhooks.deleteWebhook, // DELETE /auth/admin/webhooks/:id
  webhooks.rotateWebhookSecret, // POST /auth/admin/webhooks/:id/rotate-secret
  webhooks.testWebhook, // POST /auth/admin/webhooks/:id/test
  webhooks.webhookDeliveries, // GET /auth/admin/webhooks/:id/deliveries
  oidc.listOidcClients, // GET /auth/admin/oidc/clients
  oidc.createOidcClient, // POST /auth/admin/oidc/clients
  oidc.showOidcClient, // GET /auth/admin/oidc/clients/:client_id
  oidc.updateOidcClient, // PATCH /auth/admin/oidc/clients/:client_id
  oidc.rotateOidcClientSecret, // POST /auth/admin/oidc/clients/:client_id/rotate-secret
  oidc.deleteOidcClient, // DELETE /auth/admin/oidc/clients/:client_id
  oidc.listOidcResources, // GET /auth/admin/oidc/resources
  oidc.createOidcResource, // POST /auth/admin/oidc/resources
  oidc.showOidcResource, // GET /auth/admin/oidc/resources/:identifier
  oidc.updateOidcResource, // PATCH /auth/admin/oidc/resources/:identifier
  oidc.deleteOidcResource, // DELETE /auth/admin/oidc/resources/:identifier
  oidc.listOwnOidcGrants, // GET /auth/user/me/oidc/grants
  oidc.revokeOwnOidcGrant, // DELETE /auth/user/me/oidc/grants/:client_id
  hub.discover, // GET /api/v1/modules/install
  hub.statusAll, // GET /api/v1/modules/install/status
  hub.dryRunMany, // POST /api/v1/modules/install/dry-run
  hub.runMany, // POST /api/v1/modules/install/run
  hub.moduleStatus, // GET /api/v1/modules/install/:module_id/status
  hub.moduleRegistry, // GET /api/v1/modules/install/:module_id/registry
  hub.moduleDryRun, // POST /api/v1/modules/install/:module_id/dry-run
  hub.moduleRun, // POST /api/v1/modules/install/:module_id/run
  hub.updateDryRun, // POST /api/v1/modules/install/:module_id/update/dry-run
  hub.update, // POST /api/v1/modules/install/:module_id/update
  hub.enable, // POST /api/v1/modules/install/:module_id/enable
  hub.disable, // POST /api/v1/modules/install/:module_id/disable
  hub.uninstall, // POST /api/v1/modules/install/:module_id/uninstall
];
