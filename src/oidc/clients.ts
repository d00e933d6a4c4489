import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import type { AuditService } from '../audit/audit-service.js';
import { badRequest, notFound } from '../errors/app-error.js';
import { parseInput as parse } from '../errors/zod-issues.js';
import { checkKeys, clientJwksSchema, type ClientJwks } from './client-jwks.js';
import { resourceIdentifier } from './resources.js';

/** A registered relying party, as the CLI and the admin API show it (never its secret). */
export interface OidcClient {
  client_id: string;
  name: string;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  public: boolean;
  first_party: boolean;
  /** RP-initiated logout leaves the Gatehouse session alone (the app signs out of itself only; docs/oidc.md). */
  keep_session_on_logout: boolean;
  token_endpoint_auth_method: AuthMethod;
  /** Its public keys (a JWK Set) when it authenticates with `private_key_jwt` (a signed assertion, no secret), else null. */
  jwks: ClientJwks | null;
  /**
   * Whether an authorization request must carry a PKCE challenge (S256): true for every client unless a
   * confidential legacy client was registered without (`--no-pkce`; the doctor lists such clients).
   */
  pkce_required: boolean;
  /** The ID token's signing algorithm (`id_token_signed_response_alg`): RS256 unless registered with ES256. */
  id_token_alg: 'RS256' | 'ES256';
  /** The registered APIs (resource identifiers) it may ask tokens for; anything else is `invalid_target`. */
  allowed_resources: string[];
  /**
   * Where a signed logout token is POSTed when a Gatehouse session it signed in with ends, for any reason
   * (OpenID Connect Back-Channel Logout 1.0; src/oidc/backchannel.ts), or null.
   */
  backchannel_logout_uri: string | null;
  /** Whether it may use the device authorization grant (RFC 8628; `oidc client add --grant device_code`). */
  device_flow: boolean;
  grant_types: string[];
  created_at: string;
  updated_at: string;
}

/** How a client authenticates at the token endpoint; `client_secret_jwt` is not offered (secrets are kept hashed). */
export type AuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
const confidentialMethod = z.enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt']);

interface ClientRow {
  client_id: string;
  name: string;
  metadata: string;
  secret_hash: string | null;
  public_client: unknown;
  first_party: unknown;
  created_at: Date | string;
  updated_at: Date | string;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An exact redirect URI: absolute, no fragment, no wildcard; http only for localhost and loopback. */
export function checkRedirectUri(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (value.includes('*')) return 'may not contain a wildcard';
  if (url.hash || value.includes('#')) return 'may not contain a fragment';
  if (url.username || url.password) return 'may not contain credentials';
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname) ? null : 'must use https (http only for localhost and loopback)';
  if (url.protocol === 'https:') return null;
  // Native apps' private-use schemes (com.example.app:/cb) are allowed; script-ish ones are not.
  if (/^(javascript|data|file|vbscript|about|blob):$/.test(url.protocol)) return 'uses a scheme that cannot be a redirect';
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol) ? null : 'must use https, loopback http or a reverse-domain private scheme';
}

const uri = z
  .string()
  .trim()
  .max(2000)
  .superRefine((v, ctx) => {
    const problem = checkRedirectUri(v);
    if (problem) ctx.addIssue({ code: 'custom', message: `${v} ${problem}` });
  });

/** A back-channel logout URI: http(s), absolute, no fragment (the spec's rule) or credentials; the webhook address rules apply when it is called. */
const backchannelUri = z
  .string()
  .trim()
  .max(2000)
  .superRefine((v, ctx) => {
    let url: URL | null = null;
    try {
      url = new URL(v);
    } catch {
      url = null;
    }
    const problem = !url
      ? 'is not an absolute URL'
      : url.protocol !== 'https:' && url.protocol !== 'http:'
        ? 'must use https (or http where the webhook rules allow it)'
        : url.hash || v.includes('#')
          ? 'may not contain a fragment'
          : url.username || url.password
            ? 'may not contain credentials'
            : null;
    if (problem) ctx.addIssue({ code: 'custom', message: `${v} ${problem}` });
  });

const allowedResources = z
  .array(resourceIdentifier)
  .max(50)
  .transform((v) => [...new Set(v)]);

export const clientCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  redirect_uris: z.array(uri).min(1).max(20),
  post_logout_redirect_uris: z.array(uri).max(20).default([]),
  public: z.boolean().default(false),
  first_party: z.boolean().default(false),
  keep_session_on_logout: z.boolean().default(false),
  pkce_required: z.boolean().default(true),
  id_token_alg: z.enum(['RS256', 'ES256']).default('RS256'),
  allowed_resources: allowedResources.default([]),
  backchannel_logout_uri: backchannelUri.nullable().default(null),
  device_flow: z.boolean().default(false),
  token_endpoint_auth_method: confidentialMethod.optional(),
  jwks: clientJwksSchema.optional(),
});
export type ClientCreateInput = z.input<typeof clientCreateSchema>;

export const clientUpdateSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  redirect_uris: z.array(uri).min(1).max(20).optional(),
  post_logout_redirect_uris: z.array(uri).max(20).optional(),
  first_party: z.boolean().optional(),
  keep_session_on_logout: z.boolean().optional(),
  pkce_required: z.boolean().optional(),
  id_token_alg: z.enum(['RS256', 'ES256']).optional(),
  /** Replaces the list (the CLI's --allow-resource / --disallow-resource add to and take from it). */
  allowed_resources: allowedResources.optional(),
  /** null takes it away. */
  backchannel_logout_uri: backchannelUri.nullable().optional(),
  device_flow: z.boolean().optional(),
  token_endpoint_auth_method: confidentialMethod.optional(),
  jwks: clientJwksSchema.optional(),
});
export type ClientUpdateInput = z.input<typeof clientUpdateSchema>;

/** The device authorization grant's type (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The grants a client may use: the code flow's, client credentials for a confidential one, the device grant when it opted in. */
export const grantTypesOf = (c: { public: boolean; device_flow: boolean }): string[] => [
  'authorization_code',
  'refresh_token',
  ...(c.public ? [] : ['client_credentials']),
  ...(c.device_flow ? [DEVICE_CODE_GRANT] : []),
];

const bool = (v: unknown) => v === true || v === 1 || v === '1' || v === 't';
const iso = (v: Date | string) => (v instanceof Date ? v : new Date(v)).toISOString();

/** A client secret is 256 random bits, so one SHA-256 is the right hash (a slow hash buys nothing and costs every token request). */
export const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** Constant-time check of a presented secret against a stored hash. */
export function secretMatches(presented: unknown, storedHash: string | null | undefined): boolean {
  if (typeof presented !== 'string' || !storedHash || presented.length > 512) return false;
  const a = Buffer.from(hashSecret(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

function toClient(r: ClientRow): OidcClient & { secret_hash: string | null } {
  const m = JSON.parse(r.metadata) as Pick<OidcClient, 'redirect_uris' | 'post_logout_redirect_uris' | 'token_endpoint_auth_method' | 'grant_types'> & {
    keep_session_on_logout?: boolean;
    pkce_required?: boolean;
    id_token_alg?: 'RS256' | 'ES256';
    allowed_resources?: string[];
    backchannel_logout_uri?: string | null;
    jwks?: ClientJwks | null;
  };
  return {
    client_id: r.client_id,
    name: r.name,
    redirect_uris: m.redirect_uris,
    post_logout_redirect_uris: m.post_logout_redirect_uris ?? [],
    public: bool(r.public_client),
    first_party: bool(r.first_party),
    keep_session_on_logout: m.keep_session_on_logout === true,
    // Clients registered before PKCE was required of all have no flag: they are held to it too.
    pkce_required: bool(r.public_client) || m.pkce_required !== false,
    id_token_alg: m.id_token_alg ?? 'RS256',
    allowed_resources: m.allowed_resources ?? [],
    backchannel_logout_uri: m.backchannel_logout_uri ?? null,
    device_flow: m.grant_types.includes(DEVICE_CODE_GRANT),
    token_endpoint_auth_method: m.token_endpoint_auth_method,
    jwks: m.token_endpoint_auth_method === 'private_key_jwt' ? (m.jwks ?? null) : null,
    grant_types: m.grant_types,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    secret_hash: r.secret_hash,
  };
}

const publicView = ({ secret_hash: _s, ...c }: OidcClient & { secret_hash: string | null }): OidcClient => c;
const newSecret = () => randomBytes(32).toString('base64url');

/** The one reader and writer of `oidc_clients`; every change writes its audit event in the same unit of work. */
export function createClientStore(deps: {
  sequelize: Sequelize;
  audit: AuditService;
  clock: () => Date;
  onChange?: (clientId: string) => void;
  /** Whether a resource is registered (the resource store's): a client is allowed only registered ones. */
  resourceExists(identifier: string): Promise<boolean>;
}) {
  const { sequelize, audit, clock } = deps;
  const checkResources = async (ids: string[] | undefined) => {
    for (const id of ids ?? []) {
      if (!(await deps.resourceExists(id))) throw badRequest(`No resource ${id} is registered (gatehouse oidc resource add --identifier ${id} …)`);
    }
  };
  const readRow = async (id: string) => {
    const [row] = await sequelize.query<ClientRow>('SELECT * FROM oidc_clients WHERE client_id = ?', { type: QueryTypes.SELECT, replacements: [id] });
    return row ? toClient(row) : null;
  };
  const metadataOf = (
    c: Pick<
      OidcClient,
      | 'redirect_uris'
      | 'post_logout_redirect_uris'
      | 'keep_session_on_logout'
      | 'pkce_required'
      | 'id_token_alg'
      | 'allowed_resources'
      | 'backchannel_logout_uri'
      | 'token_endpoint_auth_method'
      | 'jwks'
      | 'grant_types'
    >,
  ) =>
    JSON.stringify({
      redirect_uris: c.redirect_uris,
      post_logout_redirect_uris: c.post_logout_redirect_uris,
      keep_session_on_logout: c.keep_session_on_logout,
      pkce_required: c.pkce_required,
      id_token_alg: c.id_token_alg,
      allowed_resources: c.allowed_resources,
      backchannel_logout_uri: c.backchannel_logout_uri,
      token_endpoint_auth_method: c.token_endpoint_auth_method,
      ...(c.token_endpoint_auth_method === 'private_key_jwt' ? { jwks: c.jwks } : {}),
      grant_types: c.grant_types,
    });

  return {
    /** With the stored secret hash: for the provider only. */
    findWithSecret: readRow,
    async get(id: string): Promise<OidcClient> {
      const c = typeof id === 'string' && id.length <= 64 ? await readRow(id) : null;
      if (!c) throw notFound('OIDC client not found');
      return publicView(c);
    },
    async list(): Promise<OidcClient[]> {
      const rows = await sequelize.query<ClientRow>('SELECT * FROM oidc_clients ORDER BY created_at, client_id', { type: QueryTypes.SELECT });
      return rows.map((r) => publicView(toClient(r)));
    },
    /** Registers a client; a confidential client's secret is in the answer once and never again. */
    async add(input: unknown): Promise<{ client: OidcClient; client_secret: string | null }> {
      const v = parse(clientCreateSchema, input);
      if (v.public && (v.token_endpoint_auth_method || v.jwks)) throw badRequest('A public client has no secret or keys: it authenticates with none');
      checkKeys(v.token_endpoint_auth_method, v.jwks);
      if (v.public && !v.pkce_required) throw badRequest('A public client must use PKCE: only a confidential client can be registered without it');
      await checkResources(v.allowed_resources);
      const method = v.public ? 'none' : (v.token_endpoint_auth_method ?? 'client_secret_basic');
      // A private_key_jwt client proves itself with its key: it has no secret at all.
      const secret = v.public || method === 'private_key_jwt' ? null : newSecret();
      const now = clock();
      const clientId = `gh_${randomBytes(12).toString('base64url')}`;
      const grantTypes = grantTypesOf(v);
      await sequelize.transaction(async (tx) => {
        await sequelize.query(
          'INSERT INTO oidc_clients (client_id, name, metadata, secret_hash, public_client, first_party, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          {
            transaction: tx,
            replacements: [
              clientId,
              v.name,
              metadataOf({
                redirect_uris: v.redirect_uris,
                post_logout_redirect_uris: v.post_logout_redirect_uris,
                keep_session_on_logout: v.keep_session_on_logout,
                pkce_required: v.pkce_required,
                id_token_alg: v.id_token_alg,
                allowed_resources: v.allowed_resources,
                backchannel_logout_uri: v.backchannel_logout_uri,
                token_endpoint_auth_method: method,
                jwks: v.jwks ?? null,
                grant_types: grantTypes,
              }),
              secret ? hashSecret(secret) : null,
              v.public,
              v.first_party,
              now,
              now,
            ],
          },
        );
        await audit.record(
          {
            type: 'oidc.client_created',
            details: {
              client_id: clientId,
              name: v.name,
              public: v.public,
              first_party: v.first_party,
              keep_session_on_logout: v.keep_session_on_logout,
              pkce_required: v.pkce_required,
              allowed_resources: v.allowed_resources,
              backchannel_logout: v.backchannel_logout_uri !== null,
              device_flow: v.device_flow,
              token_endpoint_auth_method: method,
            },
          },
          { tx },
        );
      });
      return { client: await this.get(clientId), client_secret: secret };
    },
    async update(id: string, input: unknown): Promise<OidcClient> {
      const v = parse(clientUpdateSchema, input);
      const c = await this.get(id);
      if (c.public && (v.token_endpoint_auth_method || v.jwks)) throw badRequest('A public client has no secret or keys: it authenticates with none');
      const method = v.token_endpoint_auth_method ?? c.token_endpoint_auth_method;
      checkKeys(method, v.jwks ?? (method === c.token_endpoint_auth_method ? c.jwks : undefined));
      if (c.public && v.pkce_required === false) throw badRequest('A public client must use PKCE: only a confidential client can be registered without it');
      await checkResources(v.allowed_resources);
      const merged: OidcClient = {
        ...c,
        ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)),
      };
      const next = { ...merged, grant_types: grantTypesOf(merged) };
      await sequelize.transaction(async (tx) => {
        await sequelize.query('UPDATE oidc_clients SET name = ?, metadata = ?, first_party = ?, updated_at = ? WHERE client_id = ?', {
          transaction: tx,
          replacements: [next.name, metadataOf(next), next.first_party, clock(), id],
        });
        // Moving to private_key_jwt ends the secret; moving back leaves none until `rotate-secret` issues one.
        if (method === 'private_key_jwt' && c.token_endpoint_auth_method !== 'private_key_jwt') {
          await sequelize.query('UPDATE oidc_clients SET secret_hash = NULL WHERE client_id = ?', { transaction: tx, replacements: [id] });
        }
        await audit.record(
          { type: 'oidc.client_updated', details: { client_id: id, fields: Object.keys(v).filter((k) => v[k as keyof typeof v] !== undefined) } },
          { tx },
        );
      });
      deps.onChange?.(id);
      return this.get(id);
    },
    /** The back-channel logout URIs of these clients (those that registered one), read in the caller's unit of work. */
    async backchannelUris(ids: string[], tx?: Transaction | null): Promise<Map<string, string>> {
      if (!ids.length) return new Map();
      const rows = await sequelize.query<ClientRow>('SELECT * FROM oidc_clients WHERE client_id IN (?)', {
        type: QueryTypes.SELECT,
        replacements: [ids],
        transaction: tx ?? undefined,
      });
      return new Map(rows.map(toClient).flatMap((c) => (c.backchannel_logout_uri ? [[c.client_id, c.backchannel_logout_uri] as const] : [])));
    },
    /** Takes a removed resource off every client's allow-list, in the removal's unit of work. */
    async dropResource(identifier: string, tx: Transaction): Promise<void> {
      const rows = await sequelize.query<ClientRow>('SELECT * FROM oidc_clients', { type: QueryTypes.SELECT, transaction: tx });
      for (const c of rows.map(toClient).filter((x) => x.allowed_resources.includes(identifier))) {
        await sequelize.query('UPDATE oidc_clients SET metadata = ?, updated_at = ? WHERE client_id = ?', {
          transaction: tx,
          replacements: [metadataOf({ ...c, allowed_resources: c.allowed_resources.filter((r) => r !== identifier) }), clock(), c.client_id],
        });
      }
    },
    /** A new secret, shown once; the old one stops working at once. */
    async rotateSecret(id: string): Promise<{ client: OidcClient; client_secret: string }> {
      const c = await this.get(id);
      if (c.public) throw badRequest('A public client has no secret to rotate');
      if (c.token_endpoint_auth_method === 'private_key_jwt') {
        throw badRequest('This client authenticates with private_key_jwt and has no secret: replace its keys with oidc client update --jwks-file');
      }
      const secret = newSecret();
      await sequelize.transaction(async (tx) => {
        await sequelize.query('UPDATE oidc_clients SET secret_hash = ?, updated_at = ? WHERE client_id = ?', {
          transaction: tx,
          replacements: [hashSecret(secret), clock(), id],
        });
        await audit.record({ type: 'oidc.client_secret_rotated', details: { client_id: id } }, { tx });
      });
      deps.onChange?.(id);
      return { client: await this.get(id), client_secret: secret };
    },
    /** Removes the client and everything issued to it. */
    async remove(id: string): Promise<void> {
      await this.get(id);
      await sequelize.transaction(async (tx) => {
        await sequelize.query('DELETE FROM oidc_clients WHERE client_id = ?', { transaction: tx, replacements: [id] });
        await sequelize.query("DELETE FROM oidc_artefacts WHERE model = 'Consent' AND id LIKE ?", { transaction: tx, replacements: [`%:${id}`] });
        await audit.record({ type: 'oidc.client_removed', details: { client_id: id } }, { tx });
      });
      deps.onChange?.(id);
    },
  };
}

export type ClientStore = ReturnType<typeof createClientStore>;
