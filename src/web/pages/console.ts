import type { Request, Response } from 'express';
import type { AppContext } from '../../app-context.js';
import { BadCursorError } from '../../data/repositories/user-repository.js';
import { badRequest, forbidden, isAppError } from '../../errors/app-error.js';
import { typesOf } from '../../http/routes/audit.routes.js';
import { auditEventsQuery } from '../../http/schemas/audit.schemas.js';
import { listUsersQuery } from '../../http/schemas/admin-users.schemas.js';
import type { AdminUpdateInput } from '../../services/user-fields.js';
import type { LinkedAccountRecord } from '../../social/account-repository.js';
import type { PageSession } from '../page-auth.js';
import type { WebPage } from '../web-page.js';
import { bodyString } from '../web-page.js';
import { dashboardData } from './console-dashboard.js';

/** A console handler: the signed-in staff member's session is already checked (web-router.ts). */
export type ConsoleHandler = (req: Request, res: Response, s: PageSession) => Promise<unknown> | unknown;

const USERS_PAGE = 25;
const TIMELINE = 20;

const DONE = new Set(['saved', 'role', 'verified', 'disabled', 'enabled', 'reset_mail', 'revoked', 'revoked_all', 'social_removed', 'module', 'retried']);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The console counts a search's matches exactly up to this many (or ADMIN_EXACT_COUNT_LIMIT when lower),
 * then shows the planner's estimate: counting is what a search pays for (docs/console.md "At scale").
 */
const CONSOLE_EXACT_COUNT = 1_000;

/** A user's linked accounts as the user page shows them, named as the provider buttons are. */
function socialRows(app: AppContext, accounts: LinkedAccountRecord[]) {
  const names = new Map(app.services.social.providers().map((p) => [p.id as string, p.name]));
  return accounts.map((a) => ({ provider: a.provider, name: names.get(a.provider) ?? a.provider, email: a.provider_email, linked_at: a.linked_at }));
}

export function consolePages(w: WebPage) {
  const { app } = w;
  const exactCount = () => Math.min(app.config.adminExactCountLimit, CONSOLE_EXACT_COUNT);
  const figures = dashboardData(app, exactCount);

  const render = (req: Request, res: Response, s: PageSession, page: string, data: Record<string, unknown>, status?: number) =>
    w.view.render(req, res, page, { ...w.modules.consoleData(req, s.user), ...data }, { status, user: s.user, csrf: 'console' });

  const notice = (req: Request, t: (k: string) => string) => {
    const d = str(req.query.done);
    return !d ? null : DONE.has(d) ? t(`console.done_${d}`) : w.modules.outcome(d, t, 'console');
  };

  /** GET /admin: counts, charts, health, modules, webhook backlog. */
  const dashboard: ConsoleHandler = async (req, res, s) => {
    const { t } = w.view.lang(req, s.user);
    render(req, res, s, 'admin-dashboard', await figures(t));
  };

  /**
   * GET /admin/users: the API's admin search (`users.list`, the same schema as GET /auth/admin/users)
   * with its keyset cursor. `?fragment=1` answers the results alone, for the page's search-as-you-type.
   */
  const users: ConsoleHandler = async (req, res, s) => {
    const { t } = w.view.lang(req, s.user);
    const q = str(req.query.q)?.slice(0, 200);
    const parsed = listUsersQuery.safeParse({ q, cursor: str(req.query.cursor), limit: String(USERS_PAGE) });
    if (!parsed.success) throw badRequest(t('console.bad_cursor'));
    let page;
    try {
      page = await app.services.users.list({ ...parsed.data, exactCountLimit: exactCount() });
    } catch (err) {
      if (err instanceof BadCursorError) throw badRequest(t('console.bad_cursor'));
      throw err;
    }
    const data = {
      title: t('console.users'),
      q: q ?? '',
      rows: page.users,
      total: page.total,
      exact: page.totalExact,
      next: page.nextCursor ? `/admin/users?${new URLSearchParams({ ...(q ? { q } : {}), cursor: page.nextCursor }).toString()}` : null,
    };
    if (req.query.fragment === '1') return render(req, res, s, 'admin-users-results', data);
    render(req, res, s, 'admin-users', data);
  };

  /** The user page: profile, role, state, sessions, two-factor, and the user's audit timeline. */
  const showUser = async (req: Request, res: Response, s: PageSession, extra: { error?: string; status?: number } = {}) => {
    const { t } = w.view.lang(req, s.user);
    const user = await app.services.users.get(String(req.params.id));
    const [sessions, timeline, social] = await Promise.all([
      app.services.users.listSessions(user.id),
      app.services.audit.list({ userId: user.id, limit: TIMELINE }),
      app.config.socialLogin ? app.services.social.adminListAccounts(user.id) : null,
    ]);
    const now = Date.now();
    const superActor = s.user.user_type === 'superadmin';
    const manage = superActor || user.user_type !== 'superadmin';
    // The installed modules' panels (their manifests' `web.userPanels`), in their order.
    const panels = await w.modules.userPanels(req, res, s, { user, manage });
    render(
      req,
      res,
      s,
      'admin-user',
      {
        title: user.email,
        u: user,
        sessions: sessions.filter((x) => new Date(x.expires_at).getTime() > now),
        timeline: timeline.events,
        // An admin may not manage a superadmin; only a superadmin changes roles (the API's rules).
        manage,
        panels,
        roleChange: superActor && user.id !== s.user.id,
        // One's own page: no Disable (it would lock the staff member out) and no role form (no one changes their own role).
        self: user.id === s.user.id,
        roles: ['customer', 'writer', 'admin', 'superadmin'],
        // Null while social login is off; else the user's linked accounts (GET /auth/admin/users/:user_id/social-accounts' service).
        social: social && socialRows(app, social),
        notice: notice(req, t),
        error: extra.error,
      },
      extra.status,
    );
  };

  /** Runs one action on a user; a refusal (4xx) shows the user page with its message and status, success redirects. */
  const act =
    (done: string | null, fn: (req: Request, res: Response, s: PageSession, id: string) => Promise<unknown>): ConsoleHandler =>
    async (req, res, s) => {
      const id = String(req.params.id);
      let out: unknown;
      try {
        out = await fn(req, res, s, id);
      } catch (err) {
        if (!isAppError(err) || err.status >= 500 || err.status === 404 || err.status === 429) throw err;
        return showUser(req, res, s, { error: err.message, status: err.status });
      }
      // A module panel's post names its outcome (a string key of its own) by returning it.
      const key = done ?? (typeof out === 'string' ? out : null);
      res.redirect(303, `/admin/users/${encodeURIComponent(id)}${key ? `?done=${encodeURIComponent(key)}` : ''}`);
    };

  const field = (req: Request, name: string, max: number) => bodyString(req, name, max).trim();

  const saveProfile = act('saved', (req, _res, s, id) => {
    const input: Record<string, unknown> = {};
    for (const [name, max] of [
      ['name', 100],
      ['last_name', 100],
      ['email', 254],
      ['phone', 32],
      ['title', 100],
    ] as const) {
      if (req.body?.[name] === undefined) continue;
      const v = field(req, name, max);
      input[name] = v === '' ? (name === 'email' ? v : null) : v;
    }
    return app.services.users.adminUpdate(s.user, id, input);
  });

  const changeRole = act('role', async (req, _res, s, id) => {
    // Refused here before the service's own rule (user-admin.ts) refuses it as well.
    if (s.user.user_type !== 'superadmin') throw forbidden("Only a superadmin can change a user's role");
    await app.services.users.adminUpdate(
      s.user,
      id,
      { user_type: field(req, 'user_type', 20) as AdminUpdateInput['user_type'] } /* validated by the service */,
    );
  });
  const verify = act('verified', (_req, _res, s, id) => app.services.users.adminUpdate(s.user, id, { is_verified: true }));
  const disable = act('disabled', (_req, _res, s, id) => app.services.users.adminUpdate(s.user, id, { disabled: true }));
  const enable = act('enabled', (_req, _res, s, id) => app.services.users.adminUpdate(s.user, id, { disabled: false }));

  /** The forgot-password flow's own mail (POST /auth/forgot-password's service), to the user's address. */
  const resetMail = act('reset_mail', async (_req, _res, s, id) => {
    const user = await app.services.users.get(id);
    if (user.user_type === 'superadmin' && s.user.user_type !== 'superadmin') throw forbidden();
    await app.services.passwordFlows.requestReset(user.email);
  });

  const revoke = act('revoked', (req, _res, s, id) => app.services.users.revokeSession(s.user, id, String(req.params.sessionId)));
  const revokeAll = act('revoked_all', (_req, _res, s, id) => app.services.users.revokeAllSessions(s.user, id));

  /** DELETE /auth/admin/users/:user_id/social-accounts/:provider's service: the last-way rule, `social.unlinked` (actor: the admin), the user mailed. */
  const removeSocial = act('social_removed', (req, _res, s, id) => app.services.social.adminUnlink(s.user, id, String(req.params.provider)));

  /** GET /admin/audit: the API's filters (GET /auth/admin/audit-events' schema) and cursor. */
  const audit: ConsoleHandler = async (req, res, s) => {
    const { t } = w.view.lang(req, s.user);
    const raw: Record<string, string> = {};
    for (const k of ['type', 'user_id', 'actor_id', 'outcome', 'ip', 'since', 'until', 'cursor']) {
      const v = str(req.query[k]);
      if (v) raw[k] = v.slice(0, 600);
    }
    const parsed = auditEventsQuery.safeParse(raw);
    let events: Awaited<ReturnType<typeof app.services.audit.list>> = { events: [], next_cursor: null };
    let error: string | null = null;
    if (!parsed.success) error = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    else {
      const query = parsed.data;
      try {
        events = await app.services.audit.list({
          userId: query.user_id,
          actorId: query.actor_id,
          types: query.type ? typesOf(query.type, app.services.audit.types().keys(), 'a declared event type') : undefined,
          outcome: query.outcome,
          ip: query.ip,
          since: query.since,
          until: query.until,
          limit: 50,
          cursor: query.cursor,
        });
      } catch (err) {
        if (!isAppError(err) || err.status !== 400) throw err;
        error = err.message;
      }
    }
    const { cursor: _c, ...filters } = raw;
    const next = events.next_cursor ? `/admin/audit?${new URLSearchParams({ ...filters, cursor: events.next_cursor }).toString()}` : null;
    render(
      req,
      res,
      s,
      'admin-audit',
      { title: t('console.audit'), f: filters, events: events.events, next, error, types: [...app.services.audit.types().keys()].sort() },
      error ? 400 : 200,
    );
  };

  /** GET /admin/modules: the hub's status; installing stays a CLI job (the page shows the command). */
  const modules: ConsoleHandler = async (req, res, s) => {
    const { t } = w.view.lang(req, s.user);
    const list = await app.modules.hub.status();
    render(req, res, s, 'admin-modules', { title: t('console.modules'), modules: list, notice: notice(req, t) });
  };

  /** POST /admin/modules/:id/enable|disable: the hub's service, as the API's superadmin-only routes. */
  const toggleModule =
    (on: boolean): ConsoleHandler =>
    async (req, res, s) => {
      const id = String(req.params.id);
      const opts = { actor: `http:${s.user.id}` };
      if (on) await app.modules.hub.enable(id, opts);
      else await app.modules.hub.disable(id, opts);
      res.redirect(303, '/admin/modules?done=module');
    };

  /** GET /admin/webhooks: endpoints, the outbox's backlog, and one endpoint's deliveries (`?id=`). */
  const webhooks: ConsoleHandler = async (req, res, s) => {
    const { t } = w.view.lang(req, s.user);
    const [list, backlog] = await Promise.all([app.services.webhooks.list(), app.services.webhooks.pendingStats()]);
    const id = str(req.query.id);
    const selected = id ? list.find((e) => e.id === id) : undefined;
    const deliveries = selected ? await app.services.webhooks.deliveries(selected.id, 50) : [];
    render(req, res, s, 'admin-webhooks', { title: t('console.webhooks'), list, backlog, selected: selected ?? null, deliveries, notice: notice(req, t) });
  };

  const retryDelivery: ConsoleHandler = async (req, res) => {
    await app.services.webhooks.retry(String(req.params.id));
    const back = bodyString(req, 'endpoint', 100);
    res.redirect(303, `/admin/webhooks?${new URLSearchParams({ ...(back ? { id: back } : {}), done: 'retried' }).toString()}`);
  };

  /** A module panel's post on the user page (module-pages.ts): as `act`, its outcome a module string key. */
  const moduleAct = (fn: (req: Request, res: Response, s: PageSession) => Promise<string | void>): ConsoleHandler =>
    act(null, (req, res, s) => fn(req, res, s));

  return {
    moduleAct,
    dashboard,
    users,
    user: (req: Request, res: Response, s: PageSession) => showUser(req, res, s),
    saveProfile,
    changeRole,
    verify,
    disable,
    enable,
    resetMail,
    revoke,
    revokeAll,
    removeSocial,
    audit,
    modules,
    enableModule: toggleModule(true),
    disableModule: toggleModule(false),
    webhooks,
    retryDelivery,
  };
}
