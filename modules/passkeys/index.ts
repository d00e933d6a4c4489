import { defineModule } from '../../src/module-api.js';
import { passkeyList, userPasskeys } from './web/pages.js';
import { sweepChallenges } from './challenges.js';
import { doctorChecks } from './doctor.js';
import { errorCodes } from './errors.js';
import { createPasskeysTables, TABLES } from './migrations/20261126-1300-create-passkeys-tables.js';
import { erasePasskeys, exportPasskeys } from './privacy.js';
import { routes } from './routes.js';
import { isPasskeyStep, offerMethod, startStep, verifyStep } from './second-factor.js';
import { settingsSchema } from './settings.js';

/** Passkeys (WebAuthn): add, list, rename and remove them, sign in with one, use one as a second factor (issue 24; see README.md). */
export default defineModule({
  id: 'passkeys',
  version: '1.0.0',
  description: 'Passkeys (WebAuthn): sign in without a password',
  config: settingsSchema,
  migrations: [createPasskeysTables],
  tables: TABLES,
  // The account page's section and the console user page's panel, their templates and strings: modules/passkeys/web.
  web: { account: [passkeyList], userPanels: [userPasskeys] },
  routes,
  // A user-verified passkey sign-in is two factors (login.ts proofOf): ctx.signIn with { factors: 2 }.
  provesTwoFactors: true,
  // A passkey as a second-factor method: the two-factor module's events (second-factor.ts).
  hooks: [
    { event: 'two_factor.extra_methods', handler: offerMethod },
    { event: 'two_factor.extra_start', when: isPasskeyStep, handler: startStep },
    { event: 'two_factor.extra_verify', when: isPasskeyStep, handler: verifyStep },
  ],
  jobs: [{ name: 'passkeys-challenge-sweep', schedule: '17 * * * *', run: sweepChallenges }],
  exporters: [{ name: 'passkeys', run: exportPasskeys }],
  erasers: [{ name: 'passkeys', run: erasePasskeys }],
  doctorChecks,
  rateLimits: [
    // Options and verify, registration and sign-in, counted per session (per address without one); RATE_LIMIT_PASSKEYS.
    { name: 'passkeys', points: 20, durationSec: 300, description: 'Passkey options and verifications (register, sign in), per session or address' },
  ],
  auditEvents: [
    { type: 'passkeys.added', description: 'A passkey was added (details: passkey_id, name, device_type)' },
    { type: 'passkeys.renamed', description: 'A passkey was renamed (details: passkey_id, name)' },
    { type: 'passkeys.removed', description: 'A passkey was removed (details: passkey_id, name)' },
    {
      type: 'passkeys.sign_in_refused',
      description: 'A passkey sign-in was refused (details.reason: challenge, unknown_credential, account, verification, counter_regression)',
    },
    { type: 'passkeys.registration_refused', description: 'Adding a passkey was refused (details.reason: challenge, verification, duplicate)' },
    {
      type: 'passkeys.clone_suspected',
      description: "A passkey's signature counter went backwards: a possible cloned authenticator (details: passkey_id, name)",
    },
  ],
  errorCodes,
});
