import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { outboxDir } from '../../mail/outbox.js';
import { emailField } from '../../services/user-fields.js';
import type { CliRuntime } from '../context.js';
import { commandUi, loadCliConfig } from '../context.js';
import { UsageError } from '../errors.js';

/** One message of the outbox, decoded (MIME, quoted-printable, base64, encoded words). */
export interface OutboxMail {
  file: string;
  from: string;
  to: string[];
  subject: string;
  date: string | null;
  text: string;
  /** Every http(s) link of the text body (else of the HTML body), whole, in order, each once. */
  links: string[];
}

const LINK = /https?:\/\/[^\s<>"'`]+/g;

/** The links of a text, without the punctuation a sentence puts after one. */
export function linksOf(text: string): string[] {
  const found = (text.match(LINK) ?? []).map((l) => l.replace(/[.,;:!?)\]}]+$/, ''));
  return [...new Set(found)];
}

const hrefsOf = (html: string) => [...new Set([...html.matchAll(/href="(https?:\/\/[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&')))];

type Addresses = { value: { address?: string; name?: string }[]; text: string } | { value: { address?: string; name?: string }[]; text: string }[] | undefined;
const addressesOf = (a: Addresses): string[] => (Array.isArray(a) ? a : a ? [a] : []).flatMap((x) => x.value.map((v) => v.address ?? '')).filter(Boolean);

/** Reads and decodes one .eml file (mailparser is loaded only here: no other command pays for it). */
export async function readOutboxMail(file: string): Promise<OutboxMail> {
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(await readFile(file), { skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
  const text = (parsed.text ?? '').replace(/\r\n/g, '\n').trimEnd();
  const html = typeof parsed.html === 'string' ? parsed.html : '';
  const links = linksOf(text);
  return {
    file: path.basename(file),
    from: parsed.from?.text ?? '',
    to: addressesOf(parsed.to),
    subject: parsed.subject ?? '',
    date: parsed.date ? parsed.date.toISOString() : null,
    text,
    links: links.length ? links : hrefsOf(html),
  };
}

/** The .eml files of the outbox, oldest first (their names start with the time they were written); null when there is no outbox. */
async function outboxFiles(dir: string): Promise<string[] | null> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.eml') && !f.startsWith('.')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function positiveInt(v: string): number {
  if (!/^\d{1,6}$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return Number(v);
}

interface OutboxOptions {
  last?: number;
  to?: string;
  links?: boolean;
  json?: boolean;
}

/**
 * `gatehouse mail outbox [--last N] [--to ADDRESS] [--links] [--json]`: the mail written to
 * <data dir>/outbox (no SMTP_URL), decoded, oldest first, so the newest ends up at the bottom of the
 * screen. It reads files only: no database is opened.
 */
export function registerMailOutbox(mail: Command, rt: CliRuntime): void {
  mail
    .command('outbox')
    .description('Show the mail written to the outbox (no SMTP_URL): headers and text, decoded; links whole')
    .option('--last <n>', 'only the newest N messages', positiveInt)
    .option('--to <address>', 'only messages to this address')
    .option('--links', 'print only the links, one a line (newest message last)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: OutboxOptions, cmd: Command) => {
      let to: string | undefined;
      if (opts.to !== undefined) {
        const r = emailField.safeParse(opts.to);
        if (!r.success) throw new UsageError(`--to: not an email address: ${opts.to}`, 'pass --to with an address such as jane@example.com');
        to = r.data;
      }
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const dir = outboxDir(config.dataDirAbs);
      const files = await outboxFiles(dir);
      let mails: OutboxMail[] = [];
      for (const f of files ?? []) mails.push(await readOutboxMail(path.join(dir, f)));
      if (to) mails = mails.filter((m) => m.to.some((a) => a.toLowerCase() === to));
      if (opts.last) mails = mails.slice(-opts.last);

      if (opts.json) {
        ui.result({ success: true, outbox: dir, exists: files !== null, mails: opts.links ? mails.map(({ file, links }) => ({ file, links })) : mails });
        return;
      }
      if (!mails.length) {
        const why =
          files === null
            ? `No outbox at ${dir}: nothing has been written there yet${config.smtpUrl ? ' (SMTP_URL is set: mail goes to the SMTP server)' : ''}.`
            : files.length
              ? `No message in ${dir} matches.`
              : `The outbox ${dir} is empty.`;
        // Said on stderr with --links, so a script reading the links gets nothing rather than a sentence.
        if (opts.links) ui.note(why);
        else ui.print(why);
        return;
      }
      if (opts.links) {
        for (const m of mails) for (const l of m.links) ui.print(l);
        return;
      }
      for (const m of mails) {
        ui.print(`── ${m.file}`);
        ui.print(`From:    ${m.from}`);
        ui.print(`To:      ${m.to.join(', ')}`);
        ui.print(`Subject: ${m.subject}`);
        ui.print(`Date:    ${m.date ?? '-'}`);
        ui.print();
        ui.print(m.text);
        ui.print();
      }
      ui.print(`${mails.length} message${mails.length === 1 ? '' : 's'} in ${dir}`);
    });
}
