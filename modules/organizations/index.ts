import { defineModule } from '../../src/module-api.js';
import { commands } from './commands.js';
import { errorCodes } from './errors.js';
import { createOrganizations } from './migrations/20261207-2300-create-organizations.js';
import { createOrganizationInvitations } from './migrations/20261207-2301-create-organization-invitations.js';
import { eraseOrganizations, exportOrganizations } from './privacy.js';
import { routes } from './routes.js';
import { settingsSchema } from './settings.js';
import { TABLES } from './store.js';
import { organizationsSection } from './web/account.js';
import { consoleNav, consolePages } from './web/console.js';
import { invitationPages } from './web/invitation.js';

/** Organizations: teams of users with roles (issue 53; see README.md and docs/organizations.md). */
export default defineModule({
  id: 'organizations',
  version: '1.0.0',
  description: 'Organizations: teams of users with built-in and custom roles, invitations by email',
  config: settingsSchema,
  migrations: [createOrganizations, createOrganizationInvitations],
  emails: [{ name: 'invitation', description: 'An invitation to join an organization, with its link', requires: ['organization', 'role', 'link', 'expires'] }],
  rateLimits: [
    { name: 'organizations-invite', points: 50, durationSec: 3600, description: 'Invitations sent per organization (RATE_LIMIT_ORGANIZATIONS_INVITE)' },
    { name: 'organizations-accept', points: 10, durationSec: 300, description: 'Invitation accept attempts per user (RATE_LIMIT_ORGANIZATIONS_ACCEPT)' },
  ],
  tables: TABLES,
  routes,
  errorCodes,
  commands,
  web: { pages: invitationPages, account: [organizationsSection], console: consolePages, nav: consoleNav },
  exporters: [{ name: 'organizations', run: exportOrganizations }],
  erasers: [{ name: 'organizations', run: eraseOrganizations }],
  auditEvents: [
    { type: 'organizations.created', description: 'An organization was created (details: organization_id, slug, name)' },
    { type: 'organizations.updated', description: 'An organization was changed (details: organization_id, fields; slug and previous_slug when it moved)' },
    { type: 'organizations.deleted', description: 'An organization was deleted with its members and roles (details: organization_id, slug, name, members)' },
    { type: 'organizations.member_added', description: 'A user joined an organization (details: organization_id, role, via: created, invitation, admin)' },
    { type: 'organizations.member_removed', description: 'A member was removed or left (details: organization_id, role, left)' },
    { type: 'organizations.member_role_changed', description: "A member's role changed (details: organization_id, role, previous_role)" },
    { type: 'organizations.role_created', description: 'A custom role was added (details: organization_id, role, permissions)' },
    {
      type: 'organizations.role_updated',
      description: "A custom role's permissions changed (details: organization_id, role, permissions, previous_permissions)",
    },
    { type: 'organizations.role_deleted', description: 'A custom role was deleted (details: organization_id, role)' },
    { type: 'organizations.invitation_created', description: 'An invitation was sent (details: organization_id, invitation_id, email, role)' },
    { type: 'organizations.invitation_accepted', description: 'An invitation was accepted (details: organization_id, invitation_id, role)' },
    { type: 'organizations.invitation_revoked', description: 'A pending invitation was revoked (details: organization_id, invitation_id)' },
  ],
});
