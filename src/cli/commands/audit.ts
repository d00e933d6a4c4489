import { InvalidArgumentError } from 'commander';
import type { AppContext } from '../../app-context.js';
import { MAX_AUDIT_PAGE } from '../../audit/audit-service.js';
import type { AuditEvent, AuditFilters } from '../../audit/audit-types.js';
import { expandTypes } from '../../audit/type-filter.js';
import { isAppError } from '../../errors/app-error.js';
import { instant } from '../../http/schemas/instant.js';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { count } from '../ui.js';

/** `--since` / `--until`: a date or an ISO 8601 timestamp (exit 2 on anything else). */
function instantArg(v: string): Date {
  const r = instant.safeParse(v);
  if (!r.success) throw new InvalidArgumentError('expected a date (YYYY-MM-DD) or an ISO 8601 timestamp, e.g. 2026-11-01T00:00:00Z');
  return r.data;
}

function limitArg(v: string): number {
  if (!/^\d{1,4}$/.test(v) || Number(v) < 1 || Number(v) > MAX_AUDIT_PAGE)
    throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_AUDIT_PAGE}`);
  return Number(v);
}

interface ListOptions {
  user?: string;
  type?: string;
  since?: Date;
  until?: Date;
  limit: number;
  cursor?: string;
}

/** The filters of a command line, checked against the app: the user by id or email, the declared types. */
async function filtersOf(app: AppContext, opts: Omit<ListOptions, 'limit'>): Promise<AuditFilters> {
  if (opts.since && opts.until && opts.since >= opts.until) throw new UsageError('--until must be after --since');
  let userId: string | undefined;
  if (opts.user !== undefined) {
    // An email finds the user (deleted ones too: their events stay); anything else is taken as an id.
    const user = opts.user.includes('@') ? await app.repos.users.findByEmail(opts.user, { includeDeleted: true }) : null;
    if (opts.user.includes('@') && !user) throw new CliError(`no user with the email ${opts.user}`, 'pass the user id instead if the account was erased');
    userId = user?.id ?? opts.user;
  }
  let types: string[] | undefined;
  if (opts.type !== undefined) {
    const asked = opts.type
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const { types: found, unknown } = expandTypes(asked, app.services.audit.types().keys());
    if (!asked.length || unknown.length)
      throw new UsageError(`--type ${unknown.join(', ') || opts.type}: not a declared event type`, 'docs/audit.md lists them; sign_in.* names a family');
    types = found;
  }
  return { userId, types, since: opts.since, until: opts.until, cursor: opts.cursor };
}

/** A page, with a cursor this command did not give reported as a usage error (exit 2) rather than a failure. */
async function page(app: AppContext, filters: AuditFilters) {
  try {
    return await app.services.audit.list(filters);
  } catch (err) {
    if (isAppError(err) && err.status === 400) throw new UsageError(`--cursor: ${err.message.replace(/^cursor:\s*/, '')}`);
    throw err;
  }
}

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The emails of the users the events name (about, or acting), read in one query; deleted users too, their events stay. */
async function emailsOf(app: AppContext, events: AuditEvent[]): Promise<Map<string, string>> {
  const ids = new Set<string>();
  for (const e of events) {
    if (e.user_id) ids.add(e.user_id);
    if (e.actor && 'id' in e.actor) ids.add(e.actor.id);
  }
  if (!ids.size) return new Map();
  const users = await app.repos.users.findByIds([...ids], { includeDeleted: true });
  return new Map(users.map((u) => [u.id, u.email]));
}

/** Who acted: the user's email (`self` when it is the user the event is about), cli, an OpenID client, or nobody (-). */
function actorText(e: AuditEvent, emails: Map<string, string>): string {
  const a = e.actor;
  if (a === null) return '-';
  if ('client_id' in a) return `client ${a.client_id}`;
  if ('via' in a) return 'cli';
  if (a.id === e.user_id) return 'self';
  return `${a.user_type} ${emails.get(a.id) ?? a.id}`;
}

/**
 * Two lines an event, each cut to the terminal's width (80 columns when stdout is no terminal): when,
 * type, outcome and the address it came from (on the next line when it does not fit); then whom it is
 * about (the email; the id of an erased account) first, so it is never the part cut, who acted, and
 * the details, which are what gets cut (--json has them whole).
 */
function printEvents(print: (line: string) => void, events: AuditEvent[], emails: Map<string, string>, width: number) {
  const typeWidth = Math.min(32, Math.max(...events.map((e) => e.type.length)));
  for (const e of events) {
    const at = e.at.replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
    const head = `${at}  ${e.type.padEnd(typeWidth)}  ${e.outcome.padEnd(7)}`;
    const ipFits = e.ip !== null && head.length + 2 + e.ip.length <= width;
    print(short(ipFits ? `${head}  ${e.ip}` : head.trimEnd(), width));
    const about = e.user_id ? (emails.get(e.user_id) ?? e.user_id) : '-';
    const details = Object.keys(e.details).length ? `  ${JSON.stringify(e.details)}` : '';
    print(short(`    ${about}  by ${actorText(e, emails)}${e.ip && !ipFits ? `  from ${e.ip}` : ''}${details}`, width));
  }
}

/** Writes a chunk to stdout and waits while the reader is behind, so an export never piles up in memory. */
function writeOut(out: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (out.write(text)) return resolve();
    const done = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    out.once('drain', onDrain);
    out.once('error', done);
  });
}

export const registerAudit: CommandRegistrar = (program, rt) => {
  const audit = program.command('audit').description('The security-event record: audit list, audit export (docs/audit.md)');

  audit
    .command('list')
    .description('Security events, newest first (the filters of GET /auth/admin/audit-events)')
    .option('--user <id|email>', 'events about this user')
    .option('--type <types>', 'comma-separated types; sign_in.* names a family')
    .option('--since <iso>', 'from this date or time on', instantArg)
    .option('--until <iso>', 'before this date or time', instantArg)
    .option('--limit <n>', `events per page, 1 to ${MAX_AUDIT_PAGE}`, limitArg, 50)
    .option('--cursor <cursor>', 'the next page: next_cursor of the previous answer')
    .option('--json', 'print the result as JSON')
    .action(async (opts: ListOptions, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const { result, emails } = await withApp(rt, config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        const result = await page(app, { ...(await filtersOf(app, opts)), limit: opts.limit });
        return { result, emails: await emailsOf(app, result.events) };
      });
      const out = rt.streams.stdout;
      const width = out.isTTY && (out as NodeJS.WriteStream).columns > 0 ? (out as NodeJS.WriteStream).columns : 80;
      if (result.events.length) printEvents((l) => ui.print(l), result.events, emails, width);
      ui.print(`${count(result.events.length, 'event')}${result.next_cursor ? ` (more: --cursor ${result.next_cursor})` : ''}`);
      // users: the email of each user the events name (by id), as the lines show them.
      ui.result({ success: true, events: result.events, users: Object.fromEntries(emails), next_cursor: result.next_cursor });
    });

  audit
    .command('export')
    .description('Every event in a time window as JSON lines on stdout, newest first, read page by page; progress on stderr')
    .requiredOption('--since <iso>', 'from this date or time on', instantArg)
    .option('--until <iso>', 'before this date or time (default: now)', instantArg)
    .action(async (opts: { since: Date; until?: Date }, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const out = rt.streams.stdout;
      const exported = await withApp(rt, config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        // A fixed end, so events written while the export runs neither shift the pages nor join halfway.
        const filters = await filtersOf(app, { since: opts.since, until: opts.until ?? new Date() });
        let n = 0;
        let shownAt = Date.now();
        for (let cursor: string | undefined; ;) {
          const { events, next_cursor } = await page(app, { ...filters, limit: MAX_AUDIT_PAGE, cursor });
          if (events.length) await writeOut(out, events.map((e) => `${JSON.stringify(e)}\n`).join(''));
          n += events.length;
          if (Date.now() - shownAt >= 1000) {
            ui.note(`  … ${n.toLocaleString('en-US')} events so far (at ${events[events.length - 1]?.at ?? '-'})`);
            shownAt = Date.now();
          }
          if (!next_cursor) return n;
          cursor = next_cursor;
        }
      });
      ui.note(`${count(exported, 'event')} exported`);
    });
};
