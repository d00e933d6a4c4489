/**
 * Core's event types: dotted names, past tense. Modules declare theirs in their manifest
 * (`auditEvents`, each `<module id>.<what>`); the service refuses a type nobody declared, so the
 * catalogue in docs/audit.md stays complete.
 */
export const CORE_AUDIT_TYPES = {
  'sign_in.succeeded': 'A sign-in opened a session (details.method: password, token, social:<provider>, passkey, two_factor)',
  'sign_in.failed': 'A sign-in was refused (details.reason); an unknown account has user_id null and details.identifier',
  'sign_in.throttled': 'A sign-in was refused by the login limits before any credential was checked',
  sign_out: 'A user ended their own session',
  'session.revoked': 'A session was ended by someone else, or by the user for another device (actor says who)',
  'password.changed': 'A signed-in user changed their password',
  'password.reset': 'A password was set through a reset link or code',
  'email.verified': "A user's email address was verified",
  'email.changed': "A user's email address was changed (details.identifier: the previous address, removed by an erasure; the new one is on the user)",
  'email.change_requested':
    'A signed-in user asked to change their email address and proved their password (details.identifier: the requested address, removed by an erasure); the change follows only from the link mailed to it',
  'two_factor.enabled': 'Two-factor authentication was turned on',
  'two_factor.disabled': 'Two-factor authentication was turned off by the user',
  'two_factor.reset': "An admin or the CLI removed a user's second factor",
  'two_factor.method_added': 'A second-factor method was added',
  'two_factor.method_removed': 'A second-factor method was removed',
  'social.linked': 'A social account was linked (details.provider)',
  'social.unlinked': 'A social account was unlinked (details.provider)',
  'user.created':
    'A user was created (details.via: admin, cli, registration, social; details.user_type; details.provider for social). Registration and social sign-up have the new user as actor',
  'user.updated':
    'A user was changed (details.fields: the names of the changed fields, never their values). Not for columns with an event of their own (email, role, disabled, password, verification, two-factor), nor bookkeeping (first_time, timestamps), nor an erasure',
  'user.role_changed': "A user's role changed (details.from, details.to)",
  'user.disabled': 'A user was disabled',
  'user.enabled': 'A user was enabled again',
  'user.deleted': 'A user was soft-deleted by an admin (the reason text is not kept)',
  'module.installed': 'A module was installed (details.module, details.version)',
  'module.uninstalled':
    'A module was uninstalled (details.module, details.version, details.data_kept; a later purge of its data: version null, data_kept false)',
  'module.updated': 'An installed module was updated to a newer version (details.module, details.from, details.to, details.migrations)',
  'module.toggled': 'A module was switched on or off (details.module, details.enabled)',
  'webhook.created': 'A webhook endpoint was registered (details.url, details.events)',
  'webhook.deleted': 'A webhook endpoint was removed',
  'oidc.client_created': 'An OpenID Connect client was registered (details.client_id, name, public, first_party)',
  'oidc.client_updated': 'An OpenID Connect client was changed (details.client_id, details.fields)',
  'oidc.client_secret_rotated': "An OpenID Connect client's secret was replaced (details.client_id)",
  'oidc.client_removed': 'An OpenID Connect client was removed with its consents (details.client_id)',
  'oidc.resource_created': 'An API was registered with the OpenID provider (details.identifier, name, scopes, access_token_ttl)',
  'oidc.resource_updated': 'A registered API was changed (details.identifier, details.fields)',
  'oidc.resource_removed': "A registered API was removed and taken off every client's allow-list (details.identifier)",
  'oidc.authorized': 'A client was given an authorization code for the user (details.client_id, details.scope)',
  'oidc.token_granted': 'The token endpoint issued tokens (details.client_id, details.grant_type)',
  'oidc.refresh_reuse_detected': 'A rotated refresh token was presented again: its whole grant was revoked (details.client_id)',
  'oidc.client_auth_failed':
    'A client failed to authenticate at the token, introspection or revocation endpoint (details.client_id; once a minute per client and source)',
  'oidc.consent_granted': 'A user consented to a third-party client (details.client_id, details.scope)',
  'oidc.consent_revoked': "A user's consent to a client was revoked with its tokens (details.client_id)",
  'oidc.device_approved': 'A user allowed a device on the /device page (RFC 8628; actor: the client; details.client_id, details.scope)',
  'oidc.device_denied': 'A user denied a device on the /device page (RFC 8628; actor: the client; details.client_id)',
  'oidc.keys_rotated': 'New OpenID Connect signing keys were published (details.kids, details.signs_from)',
} as const satisfies Record<string, string>;

export type CoreAuditType = keyof typeof CORE_AUDIT_TYPES;

/** The families a user sees of themselves (GET /auth/user/me/security-events). */
export const OWN_SECURITY_FAMILIES = ['sign_in.', 'sign_out', 'session.', 'password.', 'email.', 'two_factor.', 'passkeys.', 'social.'] as const;

export const AUDIT_TYPE_RE = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_]*)+$|^[a-z][a-z0-9_]*$/;
