import { defineModule, TWO_FACTOR_METHODS_EVENT } from './core.js';
import { commands, eraseTwoFactor, exportTwoFactor, onSecondFactor, uninstallGuard } from './lifecycle.js';
import { createTwoFactorTables, TABLES } from './migrations/20261124-2000-create-two-factor-tables.js';
import { routes } from './routes.js';
import { settingsSchema } from './settings.js';

/** Two-factor sign-in: email and SMS codes, authenticator apps (TOTP), backup codes, trusted devices. */
export default defineModule({
  id: 'two-factor',
  version: '1.0.0',
  description: 'Two-factor authentication: email and SMS codes, authenticator apps, backup codes, trusted devices',
  requires: [],
  config: settingsSchema,
  migrations: [createTwoFactorTables],
  routes,
  hooks: [{ event: TWO_FACTOR_METHODS_EVENT, handler: onSecondFactor }],
  jobs: [],
  emails: [
    { name: 'code', description: 'A 6-digit code to finish signing in, confirm a method or prove a change' },
    { name: 'changed', description: 'Two-factor turned on or off, a method added or removed, new backup codes, an admin reset' },
  ],
  userFields: [],
  commands,
  tables: TABLES,
  exporters: [{ name: 'two-factor', run: exportTwoFactor }],
  erasers: [{ name: 'two-factor', run: eraseTwoFactor }],
  beforeUninstall: uninstallGuard,
});
