import { expect } from 'vitest';
import type { ParsedMail, SmtpSink } from '../helpers/smtp-sink.js';
import type { TestApp } from '../helpers/test-app.js';

/** Shared by the flows-*.test.ts files: reading what the sinks received. */

export function recipients(m: ParsedMail): string {
  const to = Array.isArray(m.to) ? m.to : m.to ? [m.to] : [];
  return to
    .map((a) => a.text)
    .join(', ')
    .toLowerCase();
}

/** The next mail to `address` whose subject matches. */
export const mailTo = (sink: SmtpSink, address: string, subject: RegExp, timeoutMs?: number) =>
  sink.waitFor((m) => recipients(m).includes(address.toLowerCase()) && subject.test(m.subject ?? ''), timeoutMs);

export const mailsTo = (sink: SmtpSink, address: string) => sink.messages.filter((m) => recipients(m).includes(address.toLowerCase()));

/**
 * The first mail to `address` with this subject among those after the first `before` (waited for).
 * Security notices arrive after the answers that cause them, so "the next mail" may be another one.
 */
export async function nextMailTo(sink: SmtpSink, address: string, subject: RegExp, before: number): Promise<ParsedMail> {
  const find = () =>
    mailsTo(sink, address)
      .slice(before)
      .find((m) => subject.test(m.subject ?? ''));
  await expect.poll(find).toBeDefined();
  return find()!;
}

/** The first link carrying a token in the plain-text part. */
export function linkIn(m: ParsedMail): URL {
  const match = /(\S+[?&]token=[A-Za-z0-9_-]+\S*)/.exec(m.text ?? '');
  if (!match) throw new Error(`no token link in mail "${m.subject}":\n${m.text}`);
  return new URL(match[1]);
}

export const tokenIn = (m: ParsedMail | URL) => (m instanceof URL ? m : linkIn(m)).searchParams.get('token')!;

/** The 6-digit code in a mail's text or an SMS body. */
export function codeIn(text: string | undefined): string {
  const match = /\b(\d{6})\b/.exec(text ?? '');
  if (!match) throw new Error(`no code in: ${text}`);
  return match[1];
}

/** Follows a Gatehouse link (its host in mail is PUBLIC_URL, which tests do not listen on) against the test app. */
export const follow = (t: TestApp, link: URL) => t.request('GET', link.pathname + link.search);
