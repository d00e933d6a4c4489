import { key } from './key-def.js';
import { bool, duration, int, webhookSchedule } from './readers.js';

/** Configuration keys (schema.ts CONFIG_KEYS, in this order): webhooks (docs/webhooks.md) and the OpenID Connect provider (docs/oidc.md). */
export const INTEGRATION_KEYS = {
  // Webhooks (src/webhooks, docs/webhooks.md)
  WEBHOOK_RETRY_SCHEDULE: key(
    'webhookRetrySchedule',
    'webhooks',
    webhookSchedule,
    'Seconds to wait before each delivery attempt of a webhook message, comma-separated (the first is the first attempt); after the last failure the message is failed.',
    { default: '0,5,300,1800,7200,18000,36000,36000' },
  ),
  WEBHOOK_TIMEOUT: key('webhookTimeout', 'webhooks', int(1, 60), 'Seconds a webhook receiver has to answer one delivery before it counts as failed.', {
    default: 10,
  }),
  WEBHOOK_ALLOW_HTTP: key('webhookAllowHttp', 'webhooks', bool, 'Allow http:// webhook URLs (otherwise https only).', { default: false }),
  WEBHOOK_ALLOW_PRIVATE_URLS: key(
    'webhookAllowPrivateUrls',
    'webhooks',
    bool,
    'Allow webhook URLs that resolve to loopback, private, link-local, CGNAT, metadata, unspecified or multicast addresses (for local receivers in development and tests).',
    { default: false },
  ),
  OIDC_ENABLED: key(
    'oidcEnabled',
    'oidc',
    bool,
    'Serve the OpenID Connect provider (discovery, /oidc/*; docs/oidc.md). With no client registered nothing can use it.',
    { default: true },
  ),
  OIDC_KEY_ROTATION_GRACE: key(
    'oidcKeyRotationGrace',
    'oidc',
    duration(0, 30 * 86400),
    'How long a key made by `gatehouse oidc keys rotate` is published before it signs (relying parties refresh their JWKS cache).',
    { default: '1d' },
  ),
  OIDC_CODE_TTL_SECONDS: key(
    'oidcCodeTtlSeconds',
    'oidc',
    int(1, 600),
    'How long an OpenID Connect authorization code may be redeemed, in seconds (short: a code is used at once).',
    { default: 60 },
  ),
  OIDC_CLIENT_METADATA_DOCUMENTS: key(
    'oidcClientMetadataDocuments',
    'oidc',
    bool,
    'Accept an https URL as client_id, its JSON document fetched as the registration (Client ID Metadata Documents, for AI agents and MCP clients; webhook address rules, 5 kB, 5 s, cached). Such clients are never first-party.',
    { default: false },
  ),
};
