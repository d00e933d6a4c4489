import { defineModule } from '../../src/module-api.js';
import { userTwoFactor } from './web/console.js';
import { errorCodes } from './error-codes.js';
import { commands, eraseTwoFactor, exportTwoFactor, onSecondFactor, uninstallGuard } from './lifecycle.js';
import { createTwoFactorTables, TABLES } from './migrations/20261124-2000-create-two-factor-tables.js';
import { backupCodeLookup } from './migrations/20261207-2330-backup-code-lookup.js';
import { routes } from './routes.js';
import { settingsSchema } from './settings.js';

/** Two-factor sign-in: email and SMS codes, authenticator apps (TOTP), backup codes, trusted devices. */
export default defineModule({
  id: 'two-factor',
  version: '1.0.0',
  description: 'Two-factor authentication: email and SMS codes, authenticator apps, backup codes, trusted devices',
  requires: [],
  config: settingsSchema,
  migrations: [createTwoFactorTables, backupCodeLookup],
  routes,
  hooks: [{ event: 'auth.two_factor.methods', handler: onSecondFactor }],
  jobs: [],
  emails: [
    { name: 'code', description: 'A 6-digit code to finish signing in, confirm a method or prove a change', requires: ['code'] },
    { name: 'changed', description: 'Two-factor turned on or off, a method added or removed, new backup codes, an admin reset' },
  ],
  userFields: [],
  commands,
  tables: TABLES,
  // The console user page's panel (reset), its template and strings: modules/two-factor/web.
  web: { userPanels: [userTwoFactor] },
  exporters: [{ name: 'two-factor', run: exportTwoFactor }],
  erasers: [{ name: 'two-factor', run: eraseTwoFactor }],
  beforeUninstall: uninstallGuard,
  rateLimits: [
    // The routes' class, module:two-factor:two-factor, counted per session (else per address); RATE_LIMIT_TWO_FACTOR as when it was core's `second-factor`.
    {
      name: 'two-factor',
      points: 10,
      durationSec: 300,
      description: 'Two-factor code sends and checks (start, verify), counted per session (per address without one)',
    },
    // Budgets the module's settings set (sends_per_method, user_attempts per user_attempts_window); these are the defaults.
    { name: 'two-factor-send', points: 10, durationSec: 900, description: 'Codes sent to one email or SMS method' },
    { name: 'two-factor-user', points: 5, durationSec: 900, description: 'Wrong two-factor codes of one user, across methods' },
  ],
  errorCodes,
});
