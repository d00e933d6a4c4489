import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AppContext } from '../../app-context.js';
import type { OidcClient } from '../../oidc/clients.js';
import type { OidcResource } from '../../oidc/resources.js';
import type { CliRuntime, CommandRegistrar } from '../context.js';
import { loadCliConfig } from '../context.js';
import { runServiceCommand } from '../service-command.js';
import { UsageError } from '../errors.js';
import type { Ui } from '../ui.js';
import { count } from '../ui.js';

/**
 * `gatehouse oidc`: the OpenID provider's clients and signing keys (docs/oidc.md), as the admin API
 * (/auth/admin/oidc/clients). Bad input exits 2, an unknown client 1.
 */
const run = <T>(rt: CliRuntime, cmd: Command, fn: (app: AppContext, ui: Ui) => Promise<T>) =>
  runServiceCommand(rt, cmd, fn, { help: 'gatehouse oidc client --help', listHint: 'list them with gatehouse oidc client list', details: true });

const collect = (v: string, prev: string[] = []) => [...prev, v];
const idTokenAlg = (v: string | undefined) => {
  if (v === undefined) return undefined;
  const alg = v.toUpperCase();
  if (alg === 'RS256' || alg === 'ES256') return alg;
  throw new UsageError(`--id-token-alg: expected RS256 or ES256, got ${v}`);
};
const authMethod = (v: string | undefined) => {
  if (v === undefined) return undefined;
  if (v === 'basic' || v === 'post') return `client_secret_${v}` as const;
  if (v === 'client_secret_basic' || v === 'client_secret_post' || v === 'private_key_jwt') return v;
  throw new UsageError(
    `--token-auth: expected basic, post or private_key_jwt, got ${v}${v === 'client_secret_jwt' ? ' (client_secret_jwt is not offered: only a hash of a secret is kept)' : ''}`,
  );
};
/** A JWK Set of public keys read from a file (the client store checks it). */
const jwksFile = (path: string | undefined): unknown => {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--jwks-file: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--jwks-file: ${path} is not JSON (a JWK Set: {"keys": [ … public keys … ]})`);
  }
};
/** `--grant device_code` (repeatable): the grants a client may use beyond the code flow's; the device grant is the one so far. */
const GRANTS = ['device_code'];
const grants = (flag: string, list: string[] | undefined) => {
  for (const v of list ?? []) if (!GRANTS.includes(v)) throw new UsageError(`${flag}: expected ${GRANTS.join(' or ')}, got ${v}`);
  return list;
};
const describe = (c: OidcClient) =>
  [
    `${c.client_id}  ${c.name}  ${c.public ? 'public' : 'confidential'}${c.first_party ? ', first-party' : ''}${c.keep_session_on_logout ? ', keeps the session on logout' : ''}${c.pkce_required ? '' : ', without PKCE'}${c.device_flow ? ', device flow' : ''}  (${c.token_endpoint_auth_method}, ID tokens ${c.id_token_alg})`,
    ...c.redirect_uris.map((u) => `    redirect: ${u}`),
    ...c.post_logout_redirect_uris.map((u) => `    after logout: ${u}`),
    ...c.allowed_resources.map((u) => `    may ask for: ${u}`),
    ...(c.backchannel_logout_uri ? [`    back-channel logout: ${c.backchannel_logout_uri}`] : []),
    ...(c.jwks ? c.jwks.keys.map((k) => `    key: ${k.kty}${k.alg ? ` ${k.alg}` : ''}${k.kid ? ` kid ${k.kid}` : ''}`) : []),
  ].join('\n');
const describeResource = (r: OidcResource) =>
  `${r.identifier}  ${r.name}  scopes: ${r.scopes.join(' ')}  access tokens live ${r.access_token_ttl === null ? 'the default (1h)' : `${r.access_token_ttl}s`}`;

function parseDuration(v: string, flag = '--grace'): number {
  const m = /^(\d+)(s|m|h|d)?$/.exec(v.trim());
  if (!m) throw new UsageError(`${flag}: expected a duration like 0, 90s, 15m, 1h or 1d, got ${v}`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
}

export const registerOidc: CommandRegistrar = (program, rt) => {
  const oidc = program
    .command('oidc')
    .description(
      'The OpenID Connect provider: oidc client add|list|show|update|rotate-secret|remove, oidc resource add|list|show|update|remove, oidc keys list|rotate',
    );
  const client = oidc.command('client').description("Relying parties (apps that sign in with Gatehouse's OpenID Connect)");

  client
    .command('add')
    .description('Register a client; prints its client_id and, for a confidential client, its client_secret once')
    .requiredOption('--name <name>', 'shown on the consent page')
    .option('--redirect-uri <uri>', 'an exact redirect URI (repeat for more); https, or http for localhost/loopback', collect, [])
    .option('--post-logout-redirect-uri <uri>', 'where RP-initiated logout may return (repeat for more)', collect, [])
    .option('--public', 'a public client (a browser or native app): no secret, PKCE required')
    .option('--first-party', 'your own app: no consent page')
    .option('--keep-session-on-logout', "the app's logout (end-session) signs out of the app only, not of Gatehouse")
    .option('--backchannel-logout-uri <uri>', 'where a signed logout token is POSTed when a Gatehouse session it signed in with ends (Back-Channel Logout 1.0)')
    .option('--no-pkce', 'a confidential legacy app that cannot send a PKCE challenge (the doctor warns about it); PKCE S256 is required otherwise')
    .option('--allow-resource <identifier>', 'a registered API it may ask access tokens for (repeat for more; gatehouse oidc resource add)', collect, [])
    .option('--id-token-alg <alg>', 'how its ID tokens are signed: RS256 (default, what OpenID Connect requires every relying party to accept) or ES256')
    .option('--grant <grant>', 'a further grant it may use: device_code (RFC 8628, a TV or a CLI signs in at /device; usually with --public)', collect, [])
    .option('--token-auth <method>', 'how a confidential client authenticates: basic (default), post, or private_key_jwt (a signed assertion; no secret)')
    .option('--jwks-file <path>', 'for private_key_jwt: a JSON file with its public keys as a JWK Set (RS256, PS256 or ES256; never the private key)')
    .option('--json', 'print the result as JSON')
    .action(
      async (
        opts: {
          name: string;
          redirectUri: string[];
          postLogoutRedirectUri: string[];
          public?: boolean;
          firstParty?: boolean;
          keepSessionOnLogout?: boolean;
          backchannelLogoutUri?: string;
          pkce: boolean;
          allowResource: string[];
          idTokenAlg?: string;
          tokenAuth?: string;
          grant: string[];
          jwksFile?: string;
        },
        cmd: Command,
      ) => {
        if (opts.redirectUri.length === 0) throw new UsageError('--redirect-uri is required (at least one)');
        const input = {
          name: opts.name,
          redirect_uris: opts.redirectUri,
          post_logout_redirect_uris: opts.postLogoutRedirectUri,
          public: Boolean(opts.public),
          first_party: Boolean(opts.firstParty),
          keep_session_on_logout: Boolean(opts.keepSessionOnLogout),
          backchannel_logout_uri: opts.backchannelLogoutUri ?? null,
          pkce_required: opts.pkce,
          allowed_resources: opts.allowResource,
          // Non-null: --grant defaults to [] (collect), and grants() returns the list it was given.
          device_flow: grants('--grant', opts.grant)!.includes('device_code'),
          id_token_alg: idTokenAlg(opts.idTokenAlg),
          token_endpoint_auth_method: authMethod(opts.tokenAuth),
          jwks: jwksFile(opts.jwksFile),
        };
        const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.clients.add(input));
        ui.print(`registered ${value.client.client_id} (${value.client.name})`);
        if (value.client_secret) ui.print(`client_secret (shown once; only a hash is kept): ${value.client_secret}`);
        ui.print(`issuer: ${loadCliConfig(rt, cmd).publicBaseUrl}`);
        ui.result({ success: true, client_id: value.client.client_id, client_secret: value.client_secret, client: value.client });
      },
    );

  client
    .command('list')
    .description('List the clients (never their secrets)')
    .option('--json', 'print the result as JSON')
    .action(async (_opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.clients.list());
      ui.print(count(value.length, 'OIDC client'));
      for (const c of value) ui.print(describe(c));
      ui.result({ success: true, clients: value });
    });

  client
    .command('show <client_id>')
    .description('One client')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, _opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.clients.get(id));
      ui.print(describe(value));
      ui.result({ success: true, client: value });
    });

  client
    .command('update <client_id>')
    .description('Change a client; --redirect-uri and --post-logout-redirect-uri replace the lists')
    .option('--name <name>', 'a new name')
    .option('--redirect-uri <uri>', 'the redirect URIs (repeat)', collect)
    .option('--post-logout-redirect-uri <uri>', 'the post-logout redirect URIs (repeat)', collect)
    .option('--first-party', 'mark it first-party (no consent page)')
    .option('--no-first-party', 'ask for consent again')
    .option('--keep-session-on-logout', "the app's logout signs out of the app only, not of Gatehouse")
    .option('--no-keep-session-on-logout', "the app's logout ends the Gatehouse session too (the default)")
    .option('--backchannel-logout-uri <uri>', 'where logout tokens are POSTed (Back-Channel Logout 1.0)')
    .option('--no-backchannel-logout-uri', 'stop sending it logout tokens')
    .option('--pkce', 'require PKCE S256 of it (the default)')
    .option('--no-pkce', 'a confidential legacy app that cannot send a PKCE challenge (the doctor warns about it)')
    .option('--allow-resource <identifier>', 'add a registered API to those it may ask tokens for (repeat)', collect)
    .option('--disallow-resource <identifier>', 'take an API off its allow-list (repeat)', collect)
    .option('--id-token-alg <alg>', 'RS256 or ES256')
    .option('--grant <grant>', 'let it use a further grant: device_code (repeat)', collect)
    .option('--drop-grant <grant>', 'take a further grant away: device_code (repeat)', collect)
    .option('--token-auth <method>', 'basic, post or private_key_jwt (with --jwks-file; its secret ends)')
    .option('--jwks-file <path>', "replace a private_key_jwt client's public keys (a JWK Set in a JSON file)")
    .option('--json', 'print the result as JSON')
    .action(
      async (
        id: string,
        opts: {
          name?: string;
          redirectUri?: string[];
          postLogoutRedirectUri?: string[];
          firstParty?: boolean;
          keepSessionOnLogout?: boolean;
          backchannelLogoutUri?: string | false;
          pkce?: boolean;
          allowResource?: string[];
          disallowResource?: string[];
          idTokenAlg?: string;
          tokenAuth?: string;
          grant?: string[];
          dropGrant?: string[];
          jwksFile?: string;
        },
        cmd: Command,
      ) => {
        const firstPartyGiven = cmd.getOptionValueSource('firstParty') === 'cli';
        const input = {
          name: opts.name,
          redirect_uris: opts.redirectUri,
          post_logout_redirect_uris: opts.postLogoutRedirectUri,
          first_party: firstPartyGiven ? opts.firstParty : undefined,
          keep_session_on_logout: cmd.getOptionValueSource('keepSessionOnLogout') === 'cli' ? opts.keepSessionOnLogout : undefined,
          pkce_required: cmd.getOptionValueSource('pkce') === 'cli' ? opts.pkce : undefined,
          backchannel_logout_uri: opts.backchannelLogoutUri === false ? null : opts.backchannelLogoutUri,
          device_flow: grants('--drop-grant', opts.dropGrant)?.includes('device_code')
            ? false
            : grants('--grant', opts.grant)?.includes('device_code')
              ? true
              : undefined,
          id_token_alg: idTokenAlg(opts.idTokenAlg),
          token_endpoint_auth_method: authMethod(opts.tokenAuth),
          jwks: jwksFile(opts.jwksFile),
        };
        const { ui, value } = await run(rt, cmd, async (app) => {
          const clients = app.services.oidc.clients;
          if (!opts.allowResource && !opts.disallowResource) return clients.update(id, input);
          // The flags add to and take from the list the client has; the API's allowed_resources replaces it.
          const drop = new Set(opts.disallowResource ?? []);
          const current = (await clients.get(id)).allowed_resources;
          const allowed = [...current, ...(opts.allowResource ?? [])].filter((r) => !drop.has(r));
          return clients.update(id, { ...input, allowed_resources: allowed });
        });
        ui.print(describe(value));
        ui.result({ success: true, client: value });
      },
    );

  client
    .command('rotate-secret <client_id>')
    .description('A new client_secret (shown once); the old one stops working at once')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, _opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.clients.rotateSecret(id));
      ui.print(`new client_secret for ${id} (shown once): ${value.client_secret}`);
      ui.result({ success: true, client_id: id, client_secret: value.client_secret });
    });

  client
    .command('remove <client_id>')
    .description('Remove a client and the consents given to it; its tokens stop working')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, _opts, cmd: Command) => {
      const { ui } = await run(rt, cmd, (app) => app.services.oidc.clients.remove(id));
      ui.print(`removed ${id}`);
      ui.result({ success: true, client_id: id });
    });

  const resource = oidc.command('resource').description('Registered APIs (resource servers): the audiences of JWT access tokens, and their scopes');
  const ttlOf = (v: string | undefined) => (v === undefined ? undefined : parseDuration(v, '--access-token-ttl'));
  resource
    .command('add')
    .description('Register an API; a client asks tokens for it with resource=<identifier> once allowed (oidc client update ID --allow-resource)')
    .requiredOption('--identifier <url>', "the resource indicator and the tokens' audience: https://api.example.com")
    .requiredOption('--name <name>', 'shown on the consent page')
    .option('--scope <scope>', 'a scope the API defines (repeat for more): read:things', collect, [])
    .option('--access-token-ttl <duration>', 'how long its access tokens live: 60s to 1d (default 1h)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { identifier: string; name: string; scope: string[]; accessTokenTtl?: string }, cmd: Command) => {
      if (opts.scope.length === 0) throw new UsageError('--scope is required (at least one)');
      const input = { identifier: opts.identifier, name: opts.name, scopes: opts.scope, access_token_ttl: ttlOf(opts.accessTokenTtl) ?? null };
      const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.resources.add(input));
      ui.print(`registered ${describeResource(value)}`);
      ui.print(`allow a client to ask for it: gatehouse oidc client update CLIENT_ID --allow-resource ${value.identifier}`);
      ui.result({ success: true, resource: value });
    });
  resource
    .command('list')
    .description('List the registered APIs')
    .option('--json', 'print the result as JSON')
    .action(async (_opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.resources.list());
      ui.print(count(value.length, 'API'));
      for (const r of value) ui.print(describeResource(r));
      ui.result({ success: true, resources: value });
    });
  resource
    .command('show <identifier>')
    .description('One registered API')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, _opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.resources.get(id));
      ui.print(describeResource(value));
      ui.result({ success: true, resource: value });
    });
  resource
    .command('update <identifier>')
    .description('Change an API; --scope replaces its scopes')
    .option('--name <name>', 'a new name')
    .option('--scope <scope>', 'its scopes (repeat)', collect)
    .option('--access-token-ttl <duration>', 'how long its access tokens live: 60s to 1d')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, opts: { name?: string; scope?: string[]; accessTokenTtl?: string }, cmd: Command) => {
      const input = { name: opts.name, scopes: opts.scope, access_token_ttl: ttlOf(opts.accessTokenTtl) };
      const { ui, value } = await run(rt, cmd, (app) => app.services.oidc.resources.update(id, input));
      ui.print(describeResource(value));
      ui.result({ success: true, resource: value });
    });
  resource
    .command('remove <identifier>')
    .description("Remove an API and take it off every client's allow-list (JWTs already issued for it live out their lifetime)")
    .option('--json', 'print the result as JSON')
    .action(async (id: string, _opts, cmd: Command) => {
      const { ui } = await run(rt, cmd, (app) => app.services.oidc.resources.remove(id));
      ui.print(`removed ${id}`);
      ui.result({ success: true, identifier: id });
    });

  const keys = oidc.command('keys').description('Signing keys (RS256 and ES256), published at /oidc/jwks');
  keys
    .command('list')
    .description('The keys and their state: signing, pending (published, signs after the grace period), retiring (published until its tokens expire)')
    .option('--json', 'print the result as JSON')
    .action(async (_opts, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, async (app) => {
        await app.services.oidc.keys().ensure();
        return app.services.oidc.keys().list();
      });
      for (const k of value) ui.print(`  ${k.kid}  ${k.alg}  ${k.state}  signs from ${k.signs_from}`);
      ui.result({ success: true, keys: value });
    });
  keys
    .command('rotate')
    .description(
      'Publish new keys now; they sign after the grace period (OIDC_KEY_ROTATION_GRACE, default 1d); the old ones stay published until their tokens expire',
    )
    .option('--grace <duration>', 'override the grace period (0, 90s, 15m, 1h, 1d)')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { grace?: string }, cmd: Command) => {
      const { ui, value } = await run(rt, cmd, async (app) => {
        const grace = opts.grace === undefined ? app.config.oidcKeyRotationGrace : parseDuration(opts.grace);
        return app.services.oidc.rotateKeys(grace);
      });
      ui.print(`published ${value.kids.join(', ')}; they sign from ${value.signs_from}`);
      ui.result({ success: true, ...value });
    });
};
