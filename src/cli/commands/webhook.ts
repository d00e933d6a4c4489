import type { Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import { ENDPOINT_ID_RE, RETRY_ID_RE, webhookCreateInput } from '../../webhooks/webhook-input.js';
import type { WebhookEndpoint } from '../../webhooks/webhook-types.js';
import type { CliRuntime, CommandRegistrar } from '../context.js';
import { runServiceCommand } from '../service-command.js';
import { UsageError } from '../errors.js';
import type { Ui } from '../ui.js';
import { count } from '../ui.js';

/**
 * `gatehouse webhook`: the operator's endpoints, as the admin API (/auth/admin/webhooks). Events it
 * writes (webhook.created, webhook.deleted) name the CLI as their actor. Bad input exits 2, an
 * unknown id 1.
 */

/** Runs `fn` on the app as the CLI actor; the service's 400s are usage errors (exit 2), its 404s failures (exit 1). */
const run = <T>(rt: CliRuntime, cmd: Command, fn: (app: AppContext, ui: Ui) => Promise<T>) =>
  runServiceCommand(rt, cmd, fn, { help: 'gatehouse webhook --help', listHint: 'list them with gatehouse webhook list' });

function idArg(re: RegExp, what: string) {
  return (v: string) => {
    if (!re.test(v)) throw new UsageError(`not ${what}: ${v}`, 'ids come from gatehouse webhook list / deliveries');
    return v;
  };
}
const endpointId = idArg(ENDPOINT_ID_RE, 'a webhook endpoint id (whe_…)');
const retryId = idArg(RETRY_ID_RE, 'a delivery or message id (dlv_… or msg_…)');
const listArg = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const line = (e: WebhookEndpoint) =>
  `${e.id}  ${e.enabled ? 'enabled ' : 'DISABLED'}  ${e.url}  [${e.events.join(', ')}]${e.disabled_reason ? `  (${e.disabled_reason})` : ''}`;

export const registerWebhook: CommandRegistrar = (program, rt) => {
  const webhook = program
    .command('webhook')
    .description('Signed webhooks to your apps: webhook add, list, remove, rotate-secret, enable, test, deliveries, retry');

  webhook
    .command('add')
    .description('Register an endpoint; prints its signing secret once (whsec_…)')
    .requiredOption('--url <url>', 'where to POST (https; http only with WEBHOOK_ALLOW_HTTP=true)')
    .requiredOption('--events <types>', 'comma-separated event types: user.created, a family user.*, or *', listArg)
    .option('--description <text>', 'what the endpoint is for')
    .option('--include-ip', "send the event's ip and user agent too (personal data: off by default)")
    .option('--json', 'print the result as JSON')
    .action(async (opts: { url: string; events: string[]; description?: string; includeIp?: boolean }, cmd: Command) => {
      const parsed = webhookCreateInput.safeParse({
        url: opts.url,
        events: opts.events,
        description: opts.description,
        include_ip_user_agent: Boolean(opts.includeIp),
      });
      if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '));
      const { ui, value } = await run(rt, cmd, (app) => app.services.webhooks.create(parsed.data));
      ui.print(`registered ${value.endpoint.id} → ${value.endpoint.url}`);
      ui.print(`secret (shown once; keep it where your app can read it): ${value.secret}`);
      ui.result({ success: true, id: value.endpoint.id, url: value.endpoint.url, events: value.endpoint.events, secret: value.secret });
    });

  webhook
    .command('list')
    .description('List the endpoints (never their secrets)')
    .option('--json', 'print the result as JSON')
    .action(async (_opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, (app) => app.services.webhooks.list());
      ui.print(count(value.length, 'webhook endpoint'));
      for (const e of value) ui.print(`  ${line(e)}`);
      ui.result({ success: true, webhooks: value });
    });

  webhook
    .command('remove <id>')
    .description('Remove an endpoint with its pending messages and delivery log')
    .option('--json', 'print the result as JSON')
    .action(async (raw: string, _opts, cmd: Command) => {
      const id = endpointId(raw);
      const { ui } = await run(rt, cmd, (app) => app.services.webhooks.remove(id));
      ui.print(`removed ${id}`);
      ui.result({ success: true, id });
    });

  webhook
    .command('rotate-secret <id>')
    .description('A new signing secret (shown once); the previous one keeps signing for 24 hours')
    .option('--json', 'print the result as JSON')
    .action(async (raw: string, _opts, cmd: Command) => {
      const id = endpointId(raw);
      const { ui, value } = await run(rt, cmd, (app) => app.services.webhooks.rotateSecret(id));
      ui.print(`new secret for ${id} (shown once): ${value.secret}`);
      ui.print(`the previous secret signs too until ${value.endpoint.previous_secret_expires_at}`);
      ui.result({ success: true, id, secret: value.secret, previous_secret_expires_at: value.endpoint.previous_secret_expires_at });
    });

  webhook
    .command('enable <id>')
    .description('Switch an endpoint back on (after the worker disabled it); its failed messages can then be sent with webhook retry')
    .option('--json', 'print the result as JSON')
    .action(async (raw: string, _opts, cmd: Command) => {
      const id = endpointId(raw);
      const { ui, value } = await run(rt, cmd, (app) => app.services.webhooks.setEnabled(id, true));
      ui.print(`enabled ${value.id}`);
      ui.result({ success: true, webhook: value });
    });

  webhook
    .command('test <id>')
    .description('Send a signed webhook.test message now and show what the receiver answered')
    .option('--json', 'print the result as JSON')
    .action(async (raw: string, _opts, cmd: Command) => {
      const id = endpointId(raw);
      const { ui, value } = await run(rt, cmd, (app) => app.services.webhooks.test(id));
      const d = value.delivery;
      ui.print(
        `${d.message_status === 'delivered' ? 'delivered' : 'FAILED'}: ${d.status_code ?? 'no answer'} in ${d.duration_ms} ms${d.error ? ` (${d.error})` : ''}`,
      );
      ui.result({ success: d.message_status === 'delivered', ...value });
      if (d.message_status !== 'delivered') rt.exitCode = 1;
    });

  webhook
    .command('deliveries <id>')
    .description("An endpoint's recent delivery attempts, newest first")
    .option('--limit <n>', 'how many (1-200)', '50')
    .option('--json', 'print the result as JSON')
    .action(async (raw: string, opts: { limit: string }, cmd: Command) => {
      const id = endpointId(raw);
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new UsageError('--limit: expected a whole number from 1 to 200');
      const { ui, value } = await run(rt, cmd, (app) => app.services.webhooks.deliveries(id, limit));
      ui.print(count(value.length, 'delivery attempt'));
      for (const d of value)
        ui.print(
          `  ${d.id}  ${d.at}  ${d.type}  #${d.attempt}  ${d.status_code ?? '---'}  ${d.duration_ms} ms  ${d.message_status}${d.error ? `  ${d.error}` : ''}`,
        );
      ui.result({ success: true, deliveries: value });
    });

  webhook
    .command('retry <id>')
    .description('Send a failed message again (by delivery id dlv_… or message id msg_…), with the same webhook-id; a running server delivers it')
    .option('--json', 'print the result as JSON')
    .action(async (raw: string, _opts, cmd: Command) => {
      const id = retryId(raw);
      const { ui, value } = await run(rt, cmd, (app) => app.services.webhooks.retry(id));
      ui.print(`message ${value.id} queued again`);
      ui.result({ success: true, message: value });
    });
};
