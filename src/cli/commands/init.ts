import { Option, type Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import { createCheckContext } from '../checks/check.js';
import { preflightChecks } from '../checks/index.js';
import { readExistingConfig, writeConfigFile, type ConfigFileChange } from '../config-file.js';
import { cliLogger, commandUi, loadCliConfig, openApp, type CliRuntime, type CommandRegistrar } from '../context.js';
import { portArg } from '../arg-parsers.js';
import { CliError } from '../errors.js';
import { adminAnswers, askPassword, configAnswers, type AdminPlan, type InitOptions } from '../init-questions.js';
import { applyMigrations } from '../migrations.js';
import { selfCommand } from '../self-command.js';
import { count, type Ui } from '../ui.js';
import { GENERATED_PASSWORD_TTL_MS } from '../secrets.js';

export const registerInit: CommandRegistrar = (program, rt) => {
  program
    .command('init')
    .description('Set up a data dir: config.json with generated secrets, the schema, the first superadmin (safe to re-run)')
    .option('--database-url <url>', 'PostgreSQL URL (default: embedded SQLite in the data dir)')
    .option('--redis-url <url>', 'Redis URL (default: none; cache and limits in-process)')
    .option('--redis-prefix <prefix>', 'prefix of every Redis key and channel (default gatehouse:; recorded with a Redis URL)')
    .option('--public-url <url>', 'public base URL (default: http://HOST:PORT)')
    .option('--port <n>', 'TCP port (default 8787)', portArg)
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--smtp-url <url>', 'SMTP server (default: the outbox, files in the data dir)')
    .option('--mail-from <addr>', 'sender address of outgoing mail')
    .option('--web-pages', "mail links open Gatehouse's hosted pages (WEB_PAGES=true)")
    .option('--no-web-pages', 'mail links go to the API routes and APP_URL (WEB_PAGES=false, the default)')
    .option('--admin-email <email>', 'create the first superadmin with this email')
    .addOption(new Option('--admin-password-stdin', "read the superadmin's password from stdin").conflicts('adminPasswordFile'))
    .option('--admin-password-file <file>', "read the superadmin's password from a file")
    .option('--admin-name <name>', "the superadmin's name")
    .option('-y, --yes', 'take the defaults without asking; generate the superadmin password (printed once)')
    .option('--no-prompt', 'never ask: a value with no default and no flag is an error (exit 2)')
    .option('--json', 'print the result as JSON')
    .action((opts: InitOptions, cmd: Command) => runInit(opts, cmd, rt));
};

type AdminOutcome =
  | { status: 'created'; id: string; email: string; password?: string }
  | { status: 'exists'; email: string; user_type: string }
  | { status: 'skipped'; superadmins: number };

async function runInit(opts: InitOptions, cmd: Command, rt: CliRuntime): Promise<void> {
  const ui = commandUi(rt, cmd);
  // Without the file: where the data dir is, and whether the environment is valid, before any write.
  const base = loadCliConfig(rt, cmd, {}, { skipFile: true });
  const existing = readExistingConfig(base.configFile);
  const values = await configAnswers(ui, opts, existing, base);
  // Recorded, so later commands given only --data-dir (doctor, say) read the same env file as the service.
  if (base.envFile) values.GATEHOUSE_ENV_FILE = base.envFile;
  const admin = await adminAnswers(ui, opts, rt.streams.stdin);

  ui.note(`Setting up Gatehouse in ${base.dataDirAbs}`);
  const change = writeConfigFile(base.configFile, existing, values);
  ui.step('ok', `config.json ${change.status}`, describeChange(change));

  const config = loadCliConfig(rt, cmd);
  const logger = cliLogger(config, ui);
  const ctx = createCheckContext({ config, logger, modules: rt.modules, openApp: (c) => openApp(rt, c, logger) });
  try {
    for (const check of preflightChecks('init')) {
      const r = await check.run(ctx);
      ui.step(r.status, check.title, r.message);
      if (r.status === 'fail') throw new CliError(`${check.title}: ${r.message}`, r.hint);
    }
    const app = await ctx.app();
    const before = (await app.migrator.executed()).length;
    const applied = await applyMigrations(app, ui);
    if (!applied.length) ui.step('ok', 'Schema up to date', `${count(before, 'migration')} applied`);
    const outcome = await ensureSuperadmin(app, ui, admin);
    report(
      ui,
      config.dataDirAbs,
      config.configFile,
      change,
      applied.map((m) => m.id),
      outcome,
    );
  } finally {
    await ctx.close();
  }
}

function describeChange(c: ConfigFileChange): string {
  const parts: string[] = [];
  if (c.generated.length) parts.push(`generated ${c.generated.join(', ')}`);
  if (c.status !== 'created' && !c.generated.length) parts.push('secrets unchanged');
  if (c.updated.length) parts.push(`updated ${c.updated.join(', ')}`);
  if (c.modeFixed) parts.push('mode set to 0600');
  return parts.join('; ');
}

async function ensureSuperadmin(app: AppContext, ui: Ui, plan: AdminPlan | 'ask' | null): Promise<AdminOutcome> {
  const superadmins = await app.repos.users.count({ user_type: 'superadmin' });
  if (plan === 'ask') {
    if (superadmins > 0) return { status: 'skipped', superadmins };
    const email = (await ui.input({ flag: '--admin-email', message: 'First superadmin email (empty: skip)', default: '' })).trim();
    if (!email) return { status: 'skipped', superadmins };
    plan = { email, ...(await askPassword(ui, email)) };
  }
  if (!plan) return { status: 'skipped', superadmins };
  const found = await app.repos.users.findByEmail(plan.email, { includeDeleted: true });
  if (found) {
    ui.step('ok', `User ${found.email} already exists`, `${found.user_type}; not changed`);
    return { status: 'exists', email: found.email, user_type: found.user_type };
  }
  const { email, password, name } = plan;
  const user = await ui.task(
    `Superadmin ${email}`,
    () =>
      app.services.users.create(
        { email, password, user_type: 'superadmin', name },
        // A made-up password works for 24 hours (ASVS 6.4.1): its holder sets their own before then.
        { actor: null, via: 'cli', verified: true, passwordExpiresAt: plan.generated ? new Date(Date.now() + GENERATED_PASSWORD_TTL_MS) : null },
      ),
    () => 'created',
  );
  return { status: 'created', id: user.id, email: user.email, ...(plan.generated ? { password } : {}) };
}

function report(ui: Ui, dataDir: string, configFile: string, change: ConfigFileChange, applied: string[], admin: AdminOutcome): void {
  const cli = selfCommand();
  const serve = `${cli} serve --data-dir ${dataDir}`;
  ui.print(`Gatehouse is set up in ${dataDir}`);
  ui.print(
    change.status === 'created'
      ? `  config:     ${configFile} created (mode 0600, secrets generated)`
      : `  config:     ${configFile} ${change.status}${change.generated.length ? '' : ' (secrets unchanged)'}`,
  );
  ui.print(applied.length ? `  schema:     ${applied.length} migrations applied` : '  schema:     up to date');
  if (admin.status === 'created') {
    if (!admin.password) ui.print(`  superadmin: ${admin.email} created`);
  } else if (admin.status === 'exists') {
    ui.print(`  superadmin: ${admin.email} already exists (password unchanged)`);
  } else if (admin.superadmins > 0) {
    ui.print(`  superadmin: ${admin.superadmins} already exist${admin.superadmins === 1 ? 's' : ''}`);
  } else {
    ui.print(`  superadmin: none yet; create one with ${cli} user create --type superadmin --email you@example.com --data-dir ${dataDir}`);
  }
  ui.print(`Start it:     ${serve}`);
  // Last, so it is what stays on the screen (the quickstart's module install after it prints one line per module).
  if (admin.status === 'created' && admin.password) {
    ui.print(`  superadmin: ${admin.email} created`);
    ui.print(`  password:   ${admin.password}   (shown once; works for 24 hours: sign in and set your own)`);
  }
  ui.result({
    success: true,
    data_dir: dataDir,
    config_file: configFile,
    config: { status: change.status, updated: change.updated, generated: change.generated, mode_fixed: change.modeFixed },
    migrations_applied: applied,
    superadmin: admin,
    next: serve,
  });
}
