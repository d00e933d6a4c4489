import { z } from 'zod';
import { emailField } from './user-fields.js';

/**
 * What a token-login request carries, parsed once: the route's body is this schema, and the service
 * takes its output (`TokenLoginRequest`) as it is. The address is resolved here — the one email rule
 * (user-fields.ts) for a mail, E.164 for a text — so a malformed identifier is a 400 before any lookup.
 */

export const TOKEN_LOGIN_TYPES = ['email', 'sms', 'phone'] as const;
export type TokenLoginType = (typeof TOKEN_LOGIN_TYPES)[number];

const E164 = /^\+[1-9]\d{6,14}$/;

/** "+1 (555) 010-9999" → "+15550109999"; null unless the result is E.164. */
export function normalizePhone(input: string): string | null {
  const s = input.replace(/[\s().-]/g, '');
  return E164.test(s) ? s : null;
}

const urlField = z.string().max(2000).optional();

export const tokenLoginRequestSchema = z
  .object({
    identifier: z.string().trim().min(1).max(254),
    type: z.enum(TOKEN_LOGIN_TYPES).optional(),
    redirect_url: urlField,
    redirectUrl: urlField,
  })
  .transform((b, ctx) => {
    const redirectUrl = b.redirect_url ?? b.redirectUrl;
    if (b.type === 'email' || (!b.type && b.identifier.includes('@'))) {
      const email = emailField.safeParse(b.identifier);
      if (email.success) return { channel: 'email' as const, address: email.data, redirectUrl };
      ctx.addIssue({ code: 'custom', path: ['identifier'], message: 'must be an email address' });
      return z.NEVER;
    }
    const phone = normalizePhone(b.identifier);
    if (phone) return { channel: 'sms' as const, address: phone, redirectUrl };
    ctx.addIssue({ code: 'custom', path: ['identifier'], message: 'must be an E.164 phone number, e.g. +15551234567' });
    return z.NEVER;
  });

/** A parsed request: the channel, the normalised address, and the client's link base (checked against the allow-list later). */
export type TokenLoginRequest = z.output<typeof tokenLoginRequestSchema>;
