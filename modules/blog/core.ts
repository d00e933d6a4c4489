/**
 * The blog module's only door into core: everything it uses comes from src/module-api.ts and the
 * ModuleContext its routes, jobs, exporters and erasers are given (named `app` in the module's code).
 */
import { createHmac } from 'node:crypto';
import type { Request } from 'express';
import {
  AppError,
  badRequest,
  checkImage,
  defineModule,
  defineRoute,
  forbidden,
  moduleEnvelope,
  notFound,
  unauthorized,
  type ImageInfo,
  type MaybeSignedIn,
  type MigrationDef,
  type ModuleContext,
  type ModuleInput,
  type ModuleJob,
  type ModuleRouteDef,
  type Transaction,
  type UserRecord,
  type UserType,
} from '../../src/module-api.js';

export type { ModuleContext, ModuleJob, ModuleRouteDef, MigrationDef, Transaction, UserRecord, UserType, ImageInfo, ModuleInput };
export { AppError, badRequest, forbidden, notFound, unauthorized, defineRoute, defineModule, checkImage };

export const MODULE_ID = 'blog';

/** The caller as the module sees it. */
export interface Caller {
  user: UserRecord | null;
  auth: Pick<MaybeSignedIn, 'user' | 'tokenSource' | 'bridge'>;
}

/**
 * The caller of an `optional-session` route (or a session route): the session's user when a valid full
 * one was sent, anonymous otherwise (core's defineRoute resolves it and checks the origin of cookie writes).
 */
export const callerOf = (auth: MaybeSignedIn): Caller => ({ user: auth.user, auth });

/** `{data, user_context, meta}`; user_context also says what the caller may do with what it got. */
export function envelope(data: unknown, caller: Caller, meta: Record<string, unknown> = {}, can?: Record<string, boolean>) {
  const e = moduleEnvelope(data, caller.auth as MaybeSignedIn, meta);
  return can ? { ...e, user_context: { ...e.user_context, can } } : e;
}

export const settings = <T>(app: ModuleContext): T => app.config<T>();
export const dialect = (app: ModuleContext): 'sqlite' | 'postgres' => app.db.dialect;
export const inTransaction = <T>(app: ModuleContext, fn: (t: Transaction) => Promise<T>): Promise<T> => app.db.transaction(fn);
export const log = (app: ModuleContext) => app.logger;

/** Users are read through the user service (deleted ones included where `includeDeleted`). */
export const findUser = (app: ModuleContext, id: string, includeDeleted = false) => app.users.find(id, { includeDeleted });
export const findUserByEmail = (app: ModuleContext, email: string) => app.users.findByEmail(email);

/** Post passwords: bcrypt at the server's cost, as account passwords are. */
export const hashPassword = (app: ModuleContext, password: string) => app.passwords.hash(password);
export const verifyPassword = (app: ModuleContext, password: string, hash: string) => app.passwords.verify(password, hash);

export const publicBaseUrl = (app: ModuleContext) => app.site.publicBaseUrl.replace(/\/+$/, '');

/** A keyed digest (key derived for this module), so a stored viewer key cannot be reversed to an address by trying them all. */
export function keyedDigest(app: ModuleContext, value: string): string {
  return createHmac('sha256', app.keys.derive('viewers')).update(value).digest('hex').slice(0, 48);
}

/** The client address as the core rate limiter sees it (trusted proxies applied by express). */
export const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? '';

/** Rows of a query on the module's own tables (`?` placeholders on both dialects). */
export const select = <T = Record<string, unknown>>(app: ModuleContext, sql: string, params: unknown[] = [], transaction?: Transaction): Promise<T[]> =>
  app.db.select<T>(sql, params, { tx: transaction });

/** A statement on the module's own tables. */
export const exec = (app: ModuleContext, sql: string, params: unknown[] = [], transaction?: Transaction): Promise<void> =>
  app.db.exec(sql, params, { tx: transaction });

/** A unique index refused the row (a concurrent writer got there first). */
export { isUniqueViolation } from '../../src/module-api.js';

/** Author columns on rows, read through the user service (one read for all the authors). */
export async function withAuthors<R extends Record<string, any>>(app: ModuleContext, rows: R[], idKey: string): Promise<R[]> {
  const ids = [...new Set(rows.map((r) => r[idKey] as string).filter(Boolean))];
  const users = new Map((ids.length ? await app.users.findMany(ids, { includeDeleted: true }) : []).map((u) => [u.id, u]));
  return rows.map((r) => {
    const u = users.get(r[idKey]);
    return {
      ...r,
      author_name: u?.name ?? null,
      author_last_name: u?.last_name ?? null,
      author_user_name: u?.user_name ?? null,
      author_display_name: u?.display_name ?? null,
      author_picture: u?.picture ?? null,
    };
  });
}
