import type { Request, Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runModuleRoute, type ServedModuleRoute } from '../../src/web/module-routes.js';
import type { PageSession } from '../../src/web/page-auth.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * A page's in-process call of a module's API route (src/web/module-routes.ts) runs the route's compiled
 * pipeline (src/http/route-pipeline.ts), the one its API path runs: a backend's route without the bridge
 * secret is 403 and its handler never runs; the route's own middleware runs; roles and the session apply (issue 61).
 */
describe("a page's call into a module route", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_CACHE_INVALIDATION: '2/1m' } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  async function pageSession(): Promise<PageSession> {
    const { user, token } = await makeSession(t);
    const v = await t.app.services.sessions.validate(token);
    return { token, session: v.session, user: v.user ?? user, pending: false };
  }
  /** A page's request from `ip` (each a new request: the pipeline counts a request once per class). */
  const reqFrom = (ip: string) => ({ headers: {}, ip, socket: { remoteAddress: ip } }) as unknown as Request;
  const req = reqFrom('127.0.0.1');
  /** What the pipeline writes on a page's answer besides the page: the limit headers, `locals.auth`. */
  const fakeRes = (): Response => {
    const headers = new Map<string, unknown>();
    const res: Pick<Response, 'locals' | 'headersSent' | 'getHeader'> & { setHeader(n: string, v: unknown): void } = {
      locals: {},
      headersSent: false,
      getHeader: (n: string) => headers.get(n.toLowerCase()) as string | undefined,
      setHeader: (n, v) => void headers.set(n.toLowerCase(), v),
    };
    return res as Response;
  };
  const res = fakeRes();

  function route(
    auth: ServedModuleRoute['def']['auth'],
    ran: string[],
    middleware?: ServedModuleRoute['def']['middleware'],
    rateLimit?: ServedModuleRoute['def']['rateLimit'],
  ): ServedModuleRoute {
    return {
      def: {
        method: 'get',
        path: '/x/bridge-only',
        module: 'test',
        auth,
        middleware,
        rateLimit,
        handler: () => void ran.push(String(auth)),
      } as ServedModuleRoute['def'],
      ctx: {} as ServedModuleRoute['ctx'],
    };
  }

  it("refuses a 'bridge' or 'bridge+session' route with 403 without running its handler; a session route runs", async () => {
    const s = await pageSession();
    const ran: string[] = [];
    for (const auth of ['bridge', 'bridge+session'] as const) {
      const err = await runModuleRoute(t.app, req, res, s, route(auth, ran)).catch((e: { status?: number }) => e);
      expect(err).toMatchObject({ status: 403 });
    }
    expect(ran).toEqual([]);
    await runModuleRoute(t.app, req, res, s, route('session', ran));
    expect(ran).toEqual(['session']);
  });

  it("runs the route's own middleware before its handler, as its API path does (the one pipeline)", async () => {
    const s = await pageSession();
    const ran: string[] = [];
    const seen: string[] = [];
    const mw: NonNullable<ServedModuleRoute['def']['middleware']>[number] = (_q, r, next) => {
      // The pipeline's auth ran first: the middleware sees the caller.
      seen.push((r.locals as { auth?: { user?: { id?: string } } }).auth?.user?.id ?? 'none');
      next();
    };
    await runModuleRoute(t.app, req, fakeRes(), s, route('session', ran, [mw]));
    expect(seen).toEqual([s.user.id]);
    expect(ran).toEqual(['session']);
    // A middleware that refuses stops the call before the handler.
    const stop: typeof mw = (_q, _r, next) => next(Object.assign(new Error('refused by middleware'), { status: 415 }));
    const err = await runModuleRoute(t.app, req, fakeRes(), s, route('session', ran, [stop])).catch((e: Error) => e);
    expect(err).toMatchObject({ status: 415 });
    expect(ran).toEqual(['session']);
  });

  it("applies the route's roles, and validates the session as the API does", async () => {
    const s = await pageSession();
    const ran: string[] = [];
    const admins = await runModuleRoute(t.app, req, res, s, route({ roles: ['admin'] }, ran)).catch((e: { status?: number }) => e);
    expect(admins).toMatchObject({ status: 403 });
    expect(ran).toEqual([]);
    // A token that is no session at all is 401, whatever the page thought it held.
    const gone = await runModuleRoute(t.app, req, res, { ...s, token: 'not-a-session' }, route('session', ran)).catch((e: { status?: number }) => e);
    expect(gone).toMatchObject({ status: 401 });
    expect(ran).toEqual([]);
  });

  it("counts the call in the route's own class, once per request, and refuses a spent budget with 429 before the handler", async () => {
    const s = await pageSession();
    const ran: string[] = [];
    const limited = route('session', ran, undefined, 'cache-invalidation');
    // One page request calling the route twice is counted once (as the gate and the route's limiter count an API request).
    const one = reqFrom('10.9.0.1');
    await runModuleRoute(t.app, one, fakeRes(), s, limited);
    await runModuleRoute(t.app, one, fakeRes(), s, limited);
    await runModuleRoute(t.app, reqFrom('10.9.0.1'), fakeRes(), s, limited);
    expect(ran).toHaveLength(3);
    const refusedRes = fakeRes();
    const err = await runModuleRoute(t.app, reqFrom('10.9.0.1'), refusedRes, s, limited).catch((e: { status?: number }) => e);
    expect(err).toMatchObject({ status: 429 });
    expect(refusedRes.getHeader('X-RateLimit-Remaining')).toBe('0');
    expect(ran).toHaveLength(3);
    // Another address has its own budget.
    await runModuleRoute(t.app, reqFrom('10.9.0.2'), fakeRes(), s, limited);
    expect(ran).toHaveLength(4);
  });
});
