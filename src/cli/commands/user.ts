import { Option } from 'commander';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, requireSchema, withApp } from '../context.js';
import { CliError } from '../errors.js';
import { generatePassword, readPasswordStdin } from '../secrets.js';

export const USER_TYPES = ['superadmin', 'admin', 'writer', 'customer'] as const;

interface CreateOptions {
  email: string;
  type: (typeof USER_TYPES)[number];
  name?: string;
  lastName?: string;
  userName?: string;
  passwordStdin?: boolean;
}

export const registerUser: CommandRegistrar = (program, rt) => {
  const user = program.command('user').description('Manage users: user create | user two-factor reset');
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
      const config = loadCliConfig(cmd);
      const given = opts.passwordStdin ? await readPasswordStdin(rt.streams.stdin, '--password-stdin') : null;
      const password = given ?? generatePassword();
      const created = await withApp(config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        return app.services.users.create(
          { email: opts.email, password, user_type: opts.type, name: opts.name, last_name: opts.lastName, user_name: opts.userName },
          { actor: null, verified: true },
        );
      });
      ui.print(`Created ${created.user_type} ${created.email}`);
      ui.print(`id: ${created.id}`);
      if (!given) ui.print(`password: ${password}   (shown once; store it now)`);
      ui.result({
        success: true,
        id: created.id,
        email: created.email,
        user_type: created.user_type,
        ...(given ? {} : { password }),
      });
    });

  // The two-factor module's reset (module command two-factor:reset), where operators look for it.
  user
    .command('two-factor')
    .description('Two-factor authentication of a user (two-factor module): two-factor reset')
    .command('reset')
    .description("Turn a user's two-factor off and delete their methods and trusted devices; the user is told by mail")
    .requiredOption('--email <email>', 'email address')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { email: string }, cmd) => {
      const ui = commandUi(rt, cmd);
      const config = loadCliConfig(cmd);
      const result = await withApp(config, cliLogger(config, ui), async (app) => {
        await requireSchema(app);
        const def = app.modules.registry().flatMap((m) => m.commands.map((c) => ({ m, c }))).find((x) => x.c.name === 'two-factor:reset');
        if (!def || !app.modules.isInstalled(def.m.id)) throw new CliError('the two-factor module is not installed', 'gatehouse module install two-factor');
        return def.c.run({ ctx: app.modules.context(def.m.id), args: [], options: { email: opts.email }, print: (line) => ui.print(line) });
      });
      ui.result({ success: true, result });
    });
};
