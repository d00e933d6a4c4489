import type { Request, Response } from 'express';
import { z } from 'zod';
import type { SessionRecord } from '../data/repositories/session-repository.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import type { RouteLimit as RateLimitClass, UserType } from '../http/route-shape.js';

/**
 * A module's `web` key (issue 61): the pages, account sections, console pages and navigation entries
 * and user-page panels it brings, each rendered by core's web layer (src/web/module-pages.ts) while the
 * module is installed and switched on, and nothing of it otherwise (its paths answer the 404 page).
 * Templates (`<name>.eta`, no layout line: core wraps them in its layout) and strings
 * (`i18n/<lang>.json`, every key starting `<module id>.`) live in the module's web folder,
 * `modules/<id>/web` unless `dir` says otherwise. docs/architecture.md "Adding a page to a module".
 */

/** What every module page handler is given: the request, the signed-in user, and the page toolkit. */
export interface ModulePageKit {
  req: Request;
  res: Response;
  /** The path's parameters (`:id`). */
  params: Record<string, string>;
  /** The signed-in user's full session (null on a `public` page without one). */
  session: { user: UserRecord; session: SessionRecord } | null;
  /** The page's strings (core's and every module's), in the user's language. */
  t(key: string, vars?: Record<string, string | number>): string;
  /** A form field as a string of at most `max` characters, as sent (not trimmed: a password is kept whole); '' when absent. */
  field(name: string, max?: number): string;
  /**
   * Renders `<web dir>/<template>.eta` in the layout (console pages: the console's layout and tokens). The
   * template reads `it.t`, `it.csrf` (`field`, `token`: every form carries it), `it.when(date)` and `data`.
   */
  render(template: string, data?: Record<string, unknown>, opts?: { status?: number; title?: string }): void;
  /** A page with one message (a confirmation or a refusal), in the layout. */
  message(status: number, m: { title: string; text: string; tone?: 'error' | 'note' }): void;
  /**
   * An installed, switched-on module's API route (its own, or one it knows by method and path), run in
   * process as this session: its roles, rate-limit class, schemas and audit scope as the API runs it.
   * Null when no module serves it (the module is off).
   */
  callRoute(
    method: 'get' | 'post' | 'put' | 'patch' | 'delete',
    path: string,
    input?: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown },
  ): Promise<Record<string, unknown> | null>;
  /** Ends the browser's session cookie (after an account deletion). */
  signOut(): void;
}

/** What a section's or panel's post answers: the key of a string to show as the outcome (post/redirect/get), or nothing. */
export type ModulePostResult = string | void;

/** A page of the module at a path of its own (public, or for a signed-in user). */
export interface ModuleWebPage {
  method: 'get' | 'post';
  path: string;
  /** `public`: anyone (`kit.session` when signed in); `session`: signed in, else the sign-in page. */
  auth: 'public' | 'session';
  /** A post's class (where its API twin counts); a GET page counts in `default`. */
  rateLimit?: RateLimitClass;
  handler(kit: ModulePageKit): Promise<unknown>;
}

/** A console page (`/admin/...`): staff only (the roles, default admin and superadmin); a post needs the console's token. */
export interface ModuleConsolePage {
  method: 'get' | 'post';
  path: string;
  roles?: readonly UserType[];
  /** A post counts in `admin` unless it says otherwise. */
  rateLimit?: RateLimitClass;
  handler(kit: ModulePageKit): Promise<unknown>;
}

/** An entry of the console's navigation: a string key for its label. */
export interface ModuleConsoleNav {
  path: string;
  label: string;
  roles?: readonly UserType[];
}

/** A form post of an account section or user-page panel; its outcome (a string key) is shown on the page it redirects to. */
export interface ModuleSectionPost {
  path: string;
  rateLimit?: RateLimitClass;
  handler(kit: ModulePageKit): Promise<ModulePostResult>;
}

/**
 * A section of the account page (/account): `load` gives the template's data (null: not shown). Core's
 * sections stand at orders 10 (password), 40 (sessions), 50 (linked accounts), 60 (connected apps),
 * 70 (security events), 80 (profile), 90 (email); a module's goes before the first core section of a
 * higher order.
 */
export interface ModuleAccountSection {
  /** The section's anchor (`/account#<id>`). */
  id: string;
  order: number;
  /** String key of the section's title (navigation and heading). */
  title: string;
  template: string;
  load(kit: ModulePageKit): Promise<Record<string, unknown> | null>;
  posts?: ModuleSectionPost[];
}

/**
 * A panel of the console's user page (/admin/users/:id): `load` gets the user shown (`kit.params.id`) and
 * whether the staff member may manage them; null: not shown. Posts live under `/admin/users/:id/`.
 */
export interface ModuleUserPanel {
  id: string;
  order: number;
  template: string;
  load(kit: ModulePageKit, target: { user: UserRecord; manage: boolean }): Promise<Record<string, unknown> | null>;
  posts?: ModuleSectionPost[];
}

export interface ModuleWeb {
  /** The folder of the module's templates and `i18n/`; default `modules/<id>/web` in the package. */
  dir?: string;
  pages?: ModuleWebPage[];
  console?: ModuleConsolePage[];
  nav?: ModuleConsoleNav[];
  account?: ModuleAccountSection[];
  userPanels?: ModuleUserPanel[];
}

const fn = z.custom<(...a: never[]) => unknown>((v) => typeof v === 'function', 'must be a function');
const pagePath = z.string().regex(/^\/[A-Za-z0-9/:._-]*$/, 'must be a path');
const limit = z.custom<RateLimitClass>((v) => typeof v === 'string' || typeof v === 'function', 'must be a rate-limit class').optional();
const roles = z.array(z.enum(['customer', 'writer', 'admin', 'superadmin'])).optional();
const post = z.strictObject({ path: pagePath, rateLimit: limit, handler: fn });
const name = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'must be a lower-case name');

export const webSchema = z.strictObject({
  dir: z.string().min(1).optional(),
  pages: z
    .array(z.strictObject({ method: z.enum(['get', 'post']), path: pagePath, auth: z.enum(['public', 'session']), rateLimit: limit, handler: fn }))
    .optional(),
  console: z
    .array(
      z.strictObject({ method: z.enum(['get', 'post']), path: pagePath.regex(/^\/admin\//, 'must be under /admin/'), roles, rateLimit: limit, handler: fn }),
    )
    .optional(),
  nav: z.array(z.strictObject({ path: pagePath, label: z.string().min(1), roles })).optional(),
  account: z
    .array(
      z.strictObject({
        id: name,
        order: z.number().int(),
        title: z.string().min(1),
        template: name,
        load: fn,
        posts: z.array(post.extend({ path: pagePath.regex(/^\/account\//, 'must be under /account/') })).optional(),
      }),
    )
    .optional(),
  userPanels: z
    .array(
      z.strictObject({
        id: name,
        order: z.number().int(),
        template: name,
        load: fn,
        posts: z.array(post.extend({ path: pagePath.regex(/^\/admin\/users\/:id\//, 'must be under /admin/users/:id/') })).optional(),
      }),
    )
    .optional(),
});

/** A page route as the rate-limit gate's table reads it (a row of its route table). */
export interface WebPageRoute {
  method: 'get' | 'post';
  path: string;
  auth: 'public';
  rateLimit: RateLimitClass;
}

const ADMIN: RateLimitClass = 'admin';

/** The page routes a module's `web` key adds, with their classes (cached per manifest: the gate compares identities). */
const shapes = new WeakMap<object, WebPageRoute[]>();
export function webRouteShapes(m: { web?: ModuleWeb }): WebPageRoute[] {
  const web = m.web;
  if (!web) return [];
  const known = shapes.get(web);
  if (known) return known;
  const rows: Omit<WebPageRoute, 'auth'>[] = [
    ...(web.pages ?? []).map((p) => ({ method: p.method, path: p.path, rateLimit: p.rateLimit ?? 'default' })),
    ...(web.console ?? []).map((p) => ({ method: p.method, path: p.path, rateLimit: p.rateLimit ?? (p.method === 'post' ? ADMIN : 'default') })),
    ...(web.account ?? []).flatMap((s) => (s.posts ?? []).map((p) => ({ method: 'post' as const, path: p.path, rateLimit: p.rateLimit ?? 'default' }))),
    ...(web.userPanels ?? []).flatMap((s) => (s.posts ?? []).map((p) => ({ method: 'post' as const, path: p.path, rateLimit: p.rateLimit ?? ADMIN }))),
  ];
  // `auth` is the gate's business only for its key (per address); the page checks the session itself.
  const out = rows.map((r) => ({ ...r, auth: 'public' as const }));
  shapes.set(web, out);
  return out;
}
