import { z } from 'zod';
import { key } from './key-def.js';
import { bool, url } from './readers.js';

/** Configuration keys (schema.ts CONFIG_KEYS, in this order): mail and SMS, and how messages and hosted pages look. */
export const DELIVERY_KEYS = {
  // Mail and SMS
  SMTP_URL: key(
    'smtpUrl',
    'mail',
    url(['smtp', 'smtps']).optional(),
    'SMTP server (smtp://user:pass@host:587). Absent: messages go to the outbox dir in the data dir.',
    { secret: true },
  ),
  MAIL_FROM: key('mailFrom', 'mail', z.string().min(3), 'Sender address.', { default: 'Gatehouse <no-reply@localhost>' }),
  WEB_PAGES: key(
    'webPages',
    'mail',
    bool,
    "Point the mails' links (verification, password reset, email change) at Gatehouse's own hosted pages (/verify-email, /reset-password, /account/email/confirm) instead of the API routes and APP_URL/reset-password. The pages are served either way.",
    { default: false },
  ),
  WEB_LOGO_FILE: key(
    'webLogoFile',
    'mail',
    z.string().min(1).max(4096).optional(),
    'PNG, SVG, WebP or JPEG file shown as the logo on the hosted pages (served by Gatehouse itself).',
  ),
  PRODUCT_NAME: key('productName', 'mail', z.string().min(1).max(80), 'Product name shown in messages.', { default: 'Gatehouse' }),
  BRAND_COLOR: key('brandColor', 'mail', z.string().regex(/^#[0-9a-fA-F]{6}$/, 'expected a colour such as #2f6fed'), 'Accent colour of messages.', {
    default: '#2f6fed',
  }),
  NEW_DEVICE_EMAILS: key(
    'newDeviceEmails',
    'mail',
    bool,
    'Mail a user when they sign in from a browser/OS or a network (IPv4 /24, IPv6 /48) not seen on their account in the last 90 days (never for the first sign-in).',
    { default: true },
  ),
  SUPPORT_EMAIL: key(
    'supportEmail',
    'mail',
    z.email('expected an email address').optional(),
    'Address security notices tell users to write to when a change was not theirs. Absent: they are told to contact the administrator.',
  ),
  SMS_PROVIDER: key(
    'smsProvider',
    'mail',
    z.enum(['outbox', 'twilio']),
    'SMS provider: outbox (files in the data dir) or twilio (Twilio-compatible REST API).',
    { default: 'outbox' },
  ),
  SMS_API_URL: key('smsApiUrl', 'mail', url(['http', 'https']), 'Base URL of the Twilio-compatible API.', { default: 'https://api.twilio.com' }),
  SMS_ACCOUNT_SID: key('smsAccountSid', 'mail', z.string().optional(), 'SMS account id.'),
  SMS_AUTH_TOKEN: key('smsAuthToken', 'mail', z.string().optional(), 'SMS auth token.', { secret: true }),
  SMS_FROM: key('smsFrom', 'mail', z.string().optional(), 'SMS sender number.'),
};
