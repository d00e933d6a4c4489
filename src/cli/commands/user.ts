import { Command, InvalidArgumentError, Option } from 'commander';
import type { AppContext } from '../../app-context.js';
import type { UserRecord } from '../../data/repositories/user-repository.js';
import { MAX_PAGE_SIZE } from '../../http/schemas/admin-users.schemas.js';
import type { CliRuntime, CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from '../context.js';
import { CliError } from '../errors.js';
import { GENERATED_PASSWORD_TTL_MS, generatePassword, readPasswordStdin } from '../secrets.js';
import { runServiceCommand } from '../service-command.js';
import type { Ui } from '../ui.js';
import { count } from '../ui.js';

export const USER_TYPES = ['superadmin', 'admin', 'writer', 'customer'] as const;

interface CreateOptions {
  email: string;
  type: (typeof USER_TYPES)[number];
  name?: string;
  lastName?: string;
  userName?: string;
  passwordStdin?: boolean;
}

const run = <T>(rt: CliRuntime, cmd: Command, fn: (app: AppContext, ui: Ui) => Promise<T>) =>
  runServiceCommand(rt, cmd, fn, { help: 'gatehouse user --help', listHint: 'list them with gatehouse user list', details: true });

function limitArg(v: string): number {
  if (!/^\d{1,3}$/.test(v) || Number(v) < 1 || Number(v) > MAX_PAGE_SIZE) throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_PAGE_SIZE}`);
  return Number(v);
}

/** A live user by email (anything with an @) or id; exit 1 naming it when there is none. */
async function findUser(app: AppContext, ref: string): Promise<UserRecord> {
  if (!ref.includes('@')) return app.services.users.get(ref);
  const found = await app.repos.users.findByEmail(ref);
  if (!found) throw new CliError(`no user with the email ${ref}`, 'list them with gatehouse user list --search TEXT');
  return found;
}

const dateOf = (v: unknown) => (v instanceof Date ? v.toISOString() : v ? new Date(String(v)).toISOString() : null);
const statusOf = (u: UserRecord) => (u.disabled_at ? 'disabled' : u.is_verified ? 'active' : 'unverified');

/** The admin API's User object, plus whether (and since when) the account is disabled. */
const userJson = (app: AppContext, u: UserRecord) => ({
  ...app.services.users.toPublic(u),
  disabled: Boolean(u.disabled_at),
  disabled_at: dateOf(u.disabled_at),
});

/** One line a user, within 80 columns: email (cut with … only when longer than its column), type, status, created date. */
function userLines(users: UserRecord[]): string[] {
  const fixed = 2 + 10 + 2 + 10 + 2 + 10;
  const emailWidth = Math.min(80 - fixed, Math.max(5, ...users.map((u) => u.email.length)));
  const cut = (s: string) => (s.length > emailWidth ? `${s.slice(0, emailWidth - 1)}…` : s);
  const row = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd([emailWidth, 10, 10][i]))).join('  ');
  return [
    row(['email', 'type', 'status', 'created']),
    ...users.map((u) => row([cut(u.email), u.user_type, statusOf(u), (dateOf(u.created_at) ?? '').slice(0, 10)])),
  ];
}

function showLines(u: UserRecord, activeSessions: number): string[] {
  const name = [u.name, u.last_name].filter(Boolean).join(' ');
  return [
    `${u.email}  (${u.user_type}, ${statusOf(u)})`,
    `  id:         ${u.id}`,
    ...(name ? [`  name:       ${name}`] : []),
    ...(u.user_name ? [`  user name:  ${u.user_name}`] : []),
    `  verified:   ${u.is_verified ? 'yes' : 'no'}`,
    `  two-factor: ${u.two_factor ? 'on' : 'off'}`,
    ...(u.disabled_at ? [`  disabled:   since ${dateOf(u.disabled_at)}`] : []),
    `  created:    ${dateOf(u.created_at)}`,
    `  updated:    ${dateOf(u.updated_at)}`,
    `  sessions:   ${activeSessions} active`,
  ];
}

export const registerUser: CommandRegistrar = (program, rt) => {
  const user = program.command('user').description('Manage users: user create | list | show | disable | enable, and commands modules add');
  user
    .command('create')
    .description('Create a user through the user service (same validation as the API); the user is verified')
    .requiredOption('--email <email>', 'email address')
    .addOption(new Option('--type <type>', 'user type').choices(USER_TYPES).makeOptionMandatory())
    .option('--name <name>', 'given name')
    .option('--last-name <name>', 'last name')
    .option('--user-name <name>', 'user name')
    .option('--password-stdin', 'read the password from stdin (default: generate one and print it once)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: CreateOptions, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(rt, cmd);
      const given = opts.passwordStdin ? await readPasswordStdin(rt.streams.stdin, '--password-stdin') : null;
      const password = given ?? generatePassword();
      const created = await withApp(rt, config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        return app.services.users.create(
          { email: opts.email, password, user_type: opts.type, name: opts.name, last_name: opts.lastName, user_name: opts.userName },
          // A made-up password works for 24 hours (ASVS 6.4.1): its holder sets their own before then.
          { actor: null, via: 'cli', verified: true, passwordExpiresAt: given ? null : new Date(Date.now() + GENERATED_PASSWORD_TTL_MS) },
        );
      });
      ui.print(`Created ${created.user_type} ${created.email}`);
      ui.print(`id: ${created.id}`);
      if (!given) ui.print(`password: ${password}   (shown once; works for 24 hours: sign in and set your own)`);
      ui.result({
        success: true,
        id: created.id,
        email: created.email,
        user_type: created.user_type,
        ...(given ? {} : { password, password_expires_at: created.password_expires_at }),
      });
    });

  user
    .command('list')
    .description('List users, newest first (the filters of GET /auth/admin/users)')
    .addOption(new Option('--type <type>', 'only this user type').choices(USER_TYPES))
    .option('--search <text>', 'email, name or user name containing this text')
    .option('--limit <n>', `users per page, 1 to ${MAX_PAGE_SIZE}`, limitArg, 20)
    .option('--cursor <cursor>', 'the next page: next_cursor of the previous answer')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { type?: string; search?: string; limit: number; cursor?: string }, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, async (app) => {
        const { BadCursorError } = await import('../../data/repositories/user-repository.js');
        try {
          const page = await app.services.users.list({
            q: opts.search,
            user_type: opts.type,
            limit: opts.limit,
            page: 1,
            cursor: opts.cursor,
            exactCountLimit: app.config.adminExactCountLimit,
          });
          return { ...page, json: page.users.map((u) => userJson(app, u)) };
        } catch (err) {
          if (err instanceof BadCursorError) throw new CliError(`--cursor: ${err.message}`, 'pass the next_cursor of a previous answer', 2);
          throw err;
        }
      });
      if (value.users.length) for (const l of userLines(value.users)) ui.print(l);
      const total = `${value.totalExact ? '' : 'about '}${value.total}`;
      ui.print(`${count(value.users.length, 'user')} of ${total}${value.nextCursor ? ` (more: --cursor ${value.nextCursor})` : ''}`);
      ui.result({ success: true, users: value.json, total: value.total, total_exact: value.totalExact, next_cursor: value.nextCursor });
    });

  user
    .command('show <id|email>')
    .description('One user: type, status, dates and active sessions')
    .option('--json', 'print the result as JSON')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, async (app) => {
        const u = await findUser(app, ref);
        const sessions = (await app.services.users.listSessions(u.id)).filter((s) => s.status === 'active' && new Date(s.expires_at).getTime() > Date.now());
        return { u, sessions: sessions.length, json: userJson(app, u) };
      });
      for (const l of showLines(value.u, value.sessions)) ui.print(l);
      ui.result({ success: true, user: value.json, active_sessions: value.sessions });
    });

  for (const [name, disable] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    user
      .command(`${name} <id|email>`)
      .description(
        disable
          ? 'Disable a user as the admin API does: they can no longer sign in and every session is revoked (audited)'
          : 'Enable a disabled user again (audited)',
      )
      .option('--json', 'print the result as JSON')
      .action(async (ref: string, _opts, cmd: Command) => {
        const { ui, value } = await run(rt, cmd, async (app) => {
          const target = await findUser(app, ref);
          const was = Boolean(target.disabled_at);
          // The admin API's path (PUT /auth/admin/users/:id {disabled}) with the operator as actor: the same audit events and sign-out.
          const updated = was === disable ? target : await app.services.users.adminUpdate(null, target.id, { disabled: disable });
          return { changed: was !== disable, u: updated, json: userJson(app, updated) };
        });
        const email = value.u.email;
        if (!value.changed) ui.print(`${email} was already ${disable ? 'disabled' : 'enabled'}`);
        else ui.print(disable ? `Disabled ${email}; their sessions were revoked` : `Enabled ${email}`);
        ui.result({ success: true, changed: value.changed, user: value.json });
      });
  }

  // Module commands that ask to live here (their manifest's `alias`), e.g. `user <group> <command>`.
  const groups = new Map<string, Command>();
  for (const m of rt.modules) {
    for (const c of m.commands.filter((x) => x.alias?.[0] === 'user')) {
      // Non-null: filtered above to commands whose alias starts with 'user'.
      const [, groupName, name] = c.alias!;
      let group = groups.get(groupName);
      if (!group) groups.set(groupName, (group = user.command(groupName).description(`${groupName} (the ${m.id} module)`)));
      const sub = group.command(name).description(c.description);
      if (c.arguments) sub.arguments(c.arguments);
      for (const o of c.options ?? []) sub.option(o.flags, o.description);
      sub.option('--json', 'print the result as JSON').action(async (...argv: unknown[]) => {
        const cmd = argv[argv.length - 1] as Command;
        const ui = commandUi(rt, cmd);
        const config = loadCliConfig(rt, cmd);
        const result = await withApp(rt, config, cliLogger(config, ui), async (app) => {
          await requireSchema(app);
          if (!app.modules.isInstalled(m.id)) throw new CliError(`the ${m.id} module is not installed`, `gatehouse module install ${m.id}`);
          return c.run({ ctx: app.modules.context(m.id), args: cmd.args, options: cmd.opts(), print: (line) => ui.print(line) });
        });
        ui.result({ success: true, result });
      });
    }
  }
};
