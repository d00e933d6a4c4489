/**
 * The blog module's only door into core. Everything the module needs from src/ is imported and
 * wrapped here, so the module API refactor (src/module-api.ts, ModuleContext) changes this file only.
 */
import { createHmac } from 'node:crypto';
import type { Request } from 'express';
import { QueryTypes, UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import type { AppContext } from '../../src/app-context.js';
import type { MigrationDef } from '../../src/data/migration-types.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../../src/errors/app-error.js';
import { defineRoute, type RouteDef, type UserType } from '../../src/http/define-route.js';
import { assertSameOrigin } from '../../src/http/middleware/csrf.js';
import { readSessionToken, type AuthState } from '../../src/http/request-context.js';
import type { JobDef } from '../../src/jobs/core-jobs.js';
import { defineModule, type ModuleInput } from '../../src/modules/define-module.js';
import { moduleEnvelope } from '../../src/modules/envelope.js';
import { assertAcceptableImage, type ImageInfo } from '../../src/services/picture-service.js';

export type { AppContext, AuthState, JobDef, MigrationDef, RouteDef, Transaction, UserRecord, UserType, ImageInfo };
export { AppError, badRequest, forbidden, notFound, unauthorized, defineRoute, defineModule };
export type { ModuleInput };

export const MODULE_ID = 'blog';

/** The caller as the module sees it. */
export interface Caller {
  user: UserRecord | null;
  auth: Pick<AuthState, 'user' | 'tokenSource' | 'bridge'>;
}

/**
 * The caller of a route open to anyone: the session when one is sent and valid, anonymous otherwise
 * (an expired session reads what anyone may read). A cookie-borne state change still has to come
 * from a trusted origin.
 */
export async function optionalCaller(req: Request, app: AppContext, query?: Record<string, unknown>): Promise<Caller> {
  const { token, source } = readSessionToken(req, query);
  let user: UserRecord | null = null;
  if (token) {
    try {
      user = (await app.services.sessions.validate(token)).user;
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 401) throw err;
    }
  }
  const auth = { user, tokenSource: user ? source : null, bridge: false };
  if (user) assertSameOrigin(req, auth, app.config);
  return { user, auth };
}

/** The caller of a route whose defineRoute auth already required a session. */
export const sessionCaller = (auth: AuthState): Caller => ({ user: auth.user, auth });

/** `{data, user_context, meta}`; user_context also says what the caller may do with what it got. */
export function envelope(data: unknown, caller: Caller, meta: Record<string, unknown> = {}, can?: Record<string, boolean>) {
  const e = moduleEnvelope(data, caller.auth, meta);
  return can ? { ...e, user_context: { ...e.user_context, can } } : e;
}

export const settings = <T>(app: AppContext): T => app.modules.config<T>(MODULE_ID);
export const db = (app: AppContext): Sequelize => app.sequelize;
export const dialect = (app: AppContext): 'sqlite' | 'postgres' => app.dialect as 'sqlite' | 'postgres';
export const inTransaction = <T>(app: AppContext, fn: (t: Transaction) => Promise<T>): Promise<T> => app.sequelize.transaction(fn);
export const log = (app: AppContext) => app.logger;

export const findUser = (app: AppContext, id: string) => app.repos.users.findById(id);
export const findUserByEmail = (app: AppContext, email: string) => app.repos.users.findByEmail(email);

export const hashPassword = (app: AppContext, password: string) => app.services.passwords.hash(password);
export const verifyPassword = (app: AppContext, password: string, hash: string) => app.services.passwords.verify(password, hash);

/** JPEG, PNG or WebP recognised by content, within the accepted dimensions (as profile pictures are). */
export const checkImage = (bytes: Buffer): ImageInfo => assertAcceptableImage(bytes);

export const publicBaseUrl = (app: AppContext) => app.config.publicBaseUrl.replace(/\/+$/, '');

/** A keyed digest, so a stored viewer key cannot be reversed to an address by trying them all. */
export function keyedDigest(app: AppContext, value: string): string {
  const key = app.config.cookieSecret ?? app.config.bridgeSecret ?? 'gatehouse-blog-viewers';
  return createHmac('sha256', key).update(value).digest('hex').slice(0, 48);
}

/** The client address as the core rate limiter sees it (trusted proxies applied by express). */
export const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? '';

/** Rows of a query on the module's own tables (`?` placeholders on both dialects). */
export async function select<T = Record<string, unknown>>(app: AppContext, sql: string, params: unknown[] = [], transaction?: Transaction): Promise<T[]> {
  return (await app.sequelize.query(sql, { replacements: params, type: QueryTypes.SELECT, transaction })) as T[];
}

/** A statement on the module's own tables. */
export async function exec(app: AppContext, sql: string, params: unknown[] = [], transaction?: Transaction): Promise<void> {
  await app.sequelize.query(sql, { replacements: params, transaction });
}

/** A unique index refused the row (a concurrent writer got there first). */
export const isUniqueViolation = (err: unknown) => err instanceof UniqueConstraintError;
