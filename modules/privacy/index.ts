import { z } from 'zod';
import { defineModule } from '../../src/module-api.js';
import { yourData } from './web/account.js';
import { addPrivacyColumns } from './migrations/20261121-1200-add-privacy-columns.js';
import { createConsentEvents } from './migrations/20261121-1201-create-consent-events.js';
import { commands } from './commands.js';
import { routes } from './routes.js';
import { DEFAULT_REGIONS, erasePrivacy, exportPrivacy } from './service.js';

// No `schema`: written only through /auth/user/me/privacy; a profile update is refused with this.
const refusal = '{field} is managed through the /auth/user/me/privacy routes';
const field = (name: string, type: 'string' | 'boolean' | 'date', description: string, length?: number) => ({
  name,
  type,
  description,
  refusal,
  ...(length ? { length } : {}),
});

/** GDPR/CCPA consent and privacy region on users, consent history, personal-data export and erasure. */
export default defineModule({
  id: 'privacy',
  version: '1.0.0',
  description: 'GDPR/CCPA consent and privacy_region, consent history, personal-data export and erasure',
  config: z.object({
    allowed_regions: z
      .array(z.string().regex(/^[A-Z]{2,8}(-[A-Z0-9]{1,8})?$/, 'a region is an upper-case code such as EU or US-CA'))
      .min(1)
      .default(DEFAULT_REGIONS),
  }),
  migrations: [addPrivacyColumns, createConsentEvents],
  routes,
  userFields: [
    field('gdpr_consent', 'boolean', 'GDPR consent given'),
    field('gdpr_consent_at', 'date', 'When consent was given or withdrawn'),
    field('gdpr_consent_version', 'string', 'Version of the terms consented to', 32),
    field('ccpa_applies', 'boolean', 'CCPA applies to the user'),
    field('ccpa_opt_out', 'boolean', 'Opted out of the sale of personal information'),
    field('ccpa_opt_out_at', 'date', 'When the opt-out changed'),
    field('privacy_region', 'string', 'Privacy region (EU, EEA, UK, US-CA, US, OTHER)', 16),
  ],
  commands,
  tables: ['privacy_consent_events'],
  // The account page's "Your data" section, its template and strings: modules/privacy/web.
  web: { account: [yourData] },
  exporters: [{ name: 'privacy', run: exportPrivacy }],
  erasers: [{ name: 'privacy', run: erasePrivacy }],
  // details.by: self, admin or system (the CLI); the actor, address and request id come from the request.
  auditEvents: [
    { type: 'privacy.export_requested', description: "A copy of a user's personal data was requested and given (details.by)" },
    { type: 'privacy.erasure_requested', description: "Erasure of a user's personal data was asked for (details.by), written before it runs" },
    {
      type: 'privacy.erasure_completed',
      description: "A user's personal data was erased across core and modules (details.by, details.modules), with the erasure",
    },
  ],
});
