import type { MigrationSource } from '../migration-types.js';
import { createUsers } from './20261121-0900-create-users.js';
import { createSessions } from './20261121-0901-create-sessions.js';
import { createSystemTables } from './20261121-0902-create-system-tables.js';
import { addSessionDeviceId } from './20261121-0903-add-session-device-id.js';
import { addUserListIndexes } from './20261123-1000-add-user-list-indexes.js';
import { createUserAccounts } from './20261124-2000-create-user-accounts.js';
import { createAuditEvents } from './20261126-1200-create-audit-events.js';
import { createWebhooks } from './20261126-1300-create-webhooks.js';
import { createOidc } from './20261126-1400-create-oidc.js';
import { addSessionSignInMethod } from './20261126-1410-add-session-sign-in-method.js';
import { addUserSearchText } from './20261127-0900-add-user-search-text.js';
import { createOidcResources } from './20261207-1000-create-oidc-resources.js';
import { addSessionAmr } from './20261207-1010-add-session-amr.js';
import { addSessionSignedInAt } from './20261207-1020-add-session-signed-in-at.js';
import { addWebhookEndpointKind } from './20261207-1100-add-webhook-endpoint-kind.js';
import { addUserPasswordExpiresAt } from './20261207-2345-add-user-password-expires-at.js';

/** Core schema, in order. New migrations are appended; applied ones are never edited. */
export const coreMigrations: MigrationSource = {
  id: 'core',
  migrations: [createUsers, createSessions, createSystemTables, addSessionDeviceId, addUserListIndexes, createUserAccounts, createAuditEvents, createWebhooks, createOidc, addSessionSignInMethod, addUserSearchText, createOidcResources, addSessionAmr, addSessionSignedInAt, addWebhookEndpointKind, addUserPasswordExpiresAt],
};
