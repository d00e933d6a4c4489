import { Command, Option } from 'commander';
import type { CommandRegistrar } from '../context.js';
import { cliLogger, commandUi, loadCliConfig, moduleRegistryForCli, requireSchema, withApp } from '../context.js';
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
  const user = program.command('user').description('Manage users: user create, and commands modules add');
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
          { actor: null, via: 'cli', verified: true },
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

  // Module commands that ask to live here (their manifest's `alias`), e.g. `user <group> <command>`.
  const groups = new Map<string, Command>();
  for (const m of moduleRegistryForCli()) {
    for (const c of m.commands.filter((x) => x.alias?.[0] === 'user')) {
      const [, groupName, name] = c.alias!;
      let group = groups.get(groupName);
      if (!group) groups.set(groupName, (group = user.command(groupName).description(`${groupName} (the ${m.id} module)`)));
      const sub = group.command(name).description(c.description);
      if (c.arguments) sub.arguments(c.arguments);
      for (const o of c.options ?? []) sub.option(o.flags, o.description);
      sub.option('--json', 'print the result as JSON').action(async (...argv: unknown[]) => {
        const cmd = argv[argv.length - 1] as Command;
        const ui = commandUi(rt, cmd);
        const config = loadCliConfig(cmd);
        const result = await withApp(config, cliLogger(config, ui), async (app) => {
          await requireSchema(app);
          if (!app.modules.isInstalled(m.id)) throw new CliError(`the ${m.id} module is not installed`, `gatehouse module install ${m.id}`);
          return c.run({ ctx: app.modules.context(m.id), args: cmd.args, options: cmd.opts(), print: (line) => ui.print(line) });
        });
        ui.result({ success: true, result });
      });
    }
  }
};
