import type { AppContext } from '../../app-context.js';
import type { SessionRecord } from '../../data/repositories/session-repository.js';
import type { UserRecord } from '../../data/repositories/user-repository.js';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from '../context.js';
import { isAppError } from '../../errors/app-error.js';
import { CliError, UsageError } from '../errors.js';
import { count } from '../ui.js';
import { forgetOnRunningServer } from './limits-remote.js';

const iso = (d: Date | string) => new Date(d).toISOString();

/** What an operator may see of a session: never its token or hash (the prefix tells them apart). */
function sessionRow(s: SessionRecord, now: number) {
  return {
    id: s.id,
    session_prefix: s.session_prefix,
    status: new Date(s.expires_at).getTime() <= now ? 'expired' : s.status === 'active' ? 'active' : 'pending',
    ip_address: s.ip_address,
    user_device: s.user_device,
    created_at: iso(s.created_at),
    last_used_at: iso(s.last_used_at),
    expires_at: iso(s.expires_at),
  };
}

/** The live user with this email (the one email rule: trimmed, lower-cased), or a failure naming it. */
async function userByEmail(app: AppContext, email: string): Promise<UserRecord> {
  const user = await app.repos.users.findByEmail(email);
  if (!user) throw new CliError(`no user with the email ${email}`, 'check the address (gatehouse sessions list --user EMAIL lists one user’s sessions)');
  return user;
}

export const registerSessions: CommandRegistrar = (program, rt) => {
  const sessions = program.command('sessions').description('Manage sessions: sessions list, revoke, prune');

  sessions
    .command('list')
    .description("List one user's sessions (id, prefix, status, device, times); never the tokens")
    .requiredOption('--user <email>', 'the user, by email')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { user: string }, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const { user, rows } = await withApp(rt, config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        const user = await userByEmail(app, opts.user);
        const now = Date.now();
        return { user, rows: (await app.services.sessions.listForUser(user.id)).map((s) => sessionRow(s, now)) };
      });
      ui.print(`${count(rows.length, 'session')} of ${user.email}`);
      for (const r of rows) ui.print(`  ${r.id}  ${r.session_prefix}…  ${r.status.padEnd(7)}  last used ${r.last_used_at}  ${r.user_device ?? ''}`.trimEnd());
      ui.result({ success: true, user: { id: user.id, email: user.email }, sessions: rows });
    });

  sessions
    .command('revoke')
    .description("Revoke every session of a user (--user) or one session (--id); every instance's caches drop them")
    .option('--user <email>', 'revoke all sessions of this user')
    .option('--id <id>', 'revoke this one session (ids from sessions list)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { user?: string; id?: string }, cmd) => {
      const ui = commandUi(rt, cmd);
      if (Boolean(opts.user) === Boolean(opts.id)) throw new UsageError('sessions revoke needs exactly one of --user EMAIL or --id ID');
      const config = loadCliConfig(rt, cmd);
      // Through the user service, not a DELETE: it leaves tombstones, tells every instance (Redis pub/sub)
      // and records session.revoked with the revocation (actor: the CLI).
      const revoked = await withApp(rt, config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        if (opts.user) return app.services.users.revokeAllSessions(null, (await userByEmail(app, opts.user)).id);
        // Non-null: exactly one of --user and --id is checked above, and --user returned above.
        const session = await app.repos.sessions.findById(opts.id!);
        const gone = () => new CliError(`no session with the id ${opts.id}`, 'list them with gatehouse sessions list --user EMAIL');
        if (!session) throw gone();
        await app.services.users.revokeSession(null, session.user_id, session.id).catch((err: unknown) => {
          throw isAppError(err) && err.status === 404 ? gone() : err;
        });
        return 1;
      });
      // Without Redis no message reaches a running server: ask it directly to drop its cached copies.
      const server = config.redisUrl ? null : await forgetOnRunningServer(config);
      ui.print(`${count(revoked, 'session')} revoked`);
      if (server === false) ui.note('no running server answered on this host; none holds a cached copy');
      ui.result({ success: true, revoked });
    });

  sessions
    .command('prune')
    .description('Delete expired sessions now (the session-expiry job also does it every 10 minutes)')
    .option('--json', 'print the result as JSON')
    .action(async (_opts, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const deleted = await withApp(rt, config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        return app.services.sessions.pruneExpired({ batch: config.sessionExpiryBatch, max: config.sessionExpiryMaxPerRun });
      });
      ui.print(`${deleted} expired session${deleted === 1 ? '' : 's'} deleted`);
      ui.result({ success: true, deleted });
    });
};
