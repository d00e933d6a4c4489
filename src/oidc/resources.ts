import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import type { AuditService } from '../audit/audit-service.js';
import { isUniqueViolation } from '../data/db-errors.js';
import { badRequest, conflict, notFound } from '../errors/app-error.js';
import { parseInput as parse } from '../errors/zod-issues.js';

/**
 * A registered API (an OAuth resource server, RFC 8707): the audience of the JWT access tokens (RFC 9068)
 * issued for it, the scopes it defines, and how long its tokens live. A client may ask for it only when
 * the resource is on the client's allow-list (`allowed_resources`); anything else is `invalid_target`.
 */
export interface OidcResource {
  identifier: string;
  name: string;
  scopes: string[];
  /** Seconds; null: the provider's default (an hour). */
  access_token_ttl: number | null;
  created_at: string;
  updated_at: string;
}

interface ResourceRow {
  identifier: string;
  name: string;
  scopes: string;
  access_token_ttl: number | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** The scopes OpenID Connect and Gatehouse define for the user's claims: an API's own scopes are other names. */
export const RESERVED_SCOPES = new Set(['openid', 'offline_access', 'profile', 'email', 'phone', 'roles', 'address']);

/** A resource indicator: an absolute URI without a fragment (RFC 8707 §2); https, or http on loopback. */
export function checkResourceIdentifier(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash || value.includes('#')) return 'may not contain a fragment';
  if (url.username || url.password) return 'may not contain credentials';
  if (url.search) return 'may not contain a query';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname) ? null : 'must use https (http only for localhost and loopback)';
  return 'must use https';
}

/** A resource identifier as input (trimmed, checked): the resource's own and a client's allow-list entries. */
export const resourceIdentifier = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .superRefine((v, ctx) => {
    const problem = checkResourceIdentifier(v);
    if (problem) ctx.addIssue({ code: 'custom', message: `${v} ${problem}` });
  });
/** RFC 6749 §3.3's scope-token (printable ASCII but space, `"` and `\`), not one of the user-claim scopes. */
const scope = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'a scope is printable ASCII without spaces, quotes or backslashes')
  .refine((v) => !RESERVED_SCOPES.has(v), {
    message: 'openid, offline_access, profile, email, phone, roles and address are the user-claim scopes, not an API’s',
  });
const scopes = z
  .array(scope)
  .min(1)
  .max(50)
  .refine((v) => new Set(v).size === v.length, { message: 'a scope is named twice' });
/** The longest life a registered API may give its access tokens: a day (a JWT cannot be revoked, so it should not live long). */
export const RESOURCE_TTL_MAX = 86_400;
const ttl = z.number().int().min(60).max(RESOURCE_TTL_MAX);

export const resourceCreateSchema = z.strictObject({
  identifier: resourceIdentifier,
  name: z.string().trim().min(1).max(200),
  scopes,
  access_token_ttl: ttl.nullable().default(null),
});
export const resourceUpdateSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  scopes: scopes.optional(),
  access_token_ttl: ttl.nullable().optional(),
});

const iso = (v: Date | string) => (v instanceof Date ? v : new Date(v)).toISOString();
const toResource = (r: ResourceRow): OidcResource => ({
  identifier: r.identifier,
  name: r.name,
  scopes: JSON.parse(r.scopes) as string[],
  access_token_ttl: r.access_token_ttl === null ? null : Number(r.access_token_ttl),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/**
 * The one reader and writer of `oidc_resources`; every change writes its audit event in the same unit of
 * work. Removing a resource takes it off every client's allow-list (`dropFromClients`, the client store's).
 */
export function createResourceStore(deps: {
  sequelize: Sequelize;
  audit: AuditService;
  clock: () => Date;
  dropFromClients(identifier: string, tx: Transaction): Promise<void>;
}) {
  const { sequelize, audit, clock } = deps;
  const read = async (id: unknown): Promise<OidcResource | null> => {
    if (typeof id !== 'string' || id.length > 500) return null;
    const [row] = await sequelize.query<ResourceRow>('SELECT * FROM oidc_resources WHERE identifier = ?', { type: QueryTypes.SELECT, replacements: [id] });
    return row ? toResource(row) : null;
  };

  return {
    /** The resource, or null (the provider's look-up: never throws for an unknown one). */
    find: read,
    async get(id: string): Promise<OidcResource> {
      const r = await read(id);
      if (!r) throw notFound('OIDC resource not found');
      return r;
    },
    async list(): Promise<OidcResource[]> {
      const rows = await sequelize.query<ResourceRow>('SELECT * FROM oidc_resources ORDER BY identifier', { type: QueryTypes.SELECT });
      return rows.map(toResource);
    },
    async add(input: unknown): Promise<OidcResource> {
      const v = parse(resourceCreateSchema, input);
      if (await read(v.identifier)) throw conflict(`A resource ${v.identifier} is registered already`);
      const now = clock();
      await sequelize.transaction(async (tx) => {
        // A second registration racing this one fails on the primary key: answered as the conflict above.
        await sequelize
          .query('INSERT INTO oidc_resources (identifier, name, scopes, access_token_ttl, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', {
            transaction: tx,
            replacements: [v.identifier, v.name, JSON.stringify(v.scopes), v.access_token_ttl, now, now],
          })
          .catch((err: unknown) => {
            if (isUniqueViolation(err)) throw conflict(`A resource ${v.identifier} is registered already`);
            throw err;
          });
        await audit.record(
          { type: 'oidc.resource_created', details: { identifier: v.identifier, name: v.name, scopes: v.scopes, access_token_ttl: v.access_token_ttl } },
          { tx },
        );
      });
      return this.get(v.identifier);
    },
    async update(id: string, input: unknown): Promise<OidcResource> {
      const v = parse(resourceUpdateSchema, input);
      const r = await this.get(id);
      const next = { ...r, ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) };
      const fields = Object.keys(v).filter((k) => v[k as keyof typeof v] !== undefined);
      if (!fields.length) throw badRequest('Nothing to change: give a name, scopes or an access token lifetime');
      await sequelize.transaction(async (tx) => {
        await sequelize.query('UPDATE oidc_resources SET name = ?, scopes = ?, access_token_ttl = ?, updated_at = ? WHERE identifier = ?', {
          transaction: tx,
          replacements: [next.name, JSON.stringify(next.scopes), next.access_token_ttl, clock(), id],
        });
        await audit.record({ type: 'oidc.resource_updated', details: { identifier: id, fields } }, { tx });
      });
      return this.get(id);
    },
    /** Removes the resource and takes it off every client's allow-list; tokens already issued for it live out their lifetime. */
    async remove(id: string): Promise<void> {
      await this.get(id);
      await sequelize.transaction(async (tx) => {
        await sequelize.query('DELETE FROM oidc_resources WHERE identifier = ?', { transaction: tx, replacements: [id] });
        await deps.dropFromClients(id, tx);
        await audit.record({ type: 'oidc.resource_removed', details: { identifier: id } }, { tx });
      });
    },
  };
}

export type ResourceStore = ReturnType<typeof createResourceStore>;
