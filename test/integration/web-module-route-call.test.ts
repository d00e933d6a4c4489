import type { Request, Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runModuleRoute, type ServedModuleRoute } from '../../src/web/module-routes.js';
import type { PageSession } from '../../src/web/page-auth.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * A page's in-process call of a module's API route (src/web/module-routes.ts) honours what the route asks or
 * refuses it: a backend's route without the bridge secret is 403 and its handler never runs (issue 61).
 */
describe("a page's call into a module route", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  async function pageSession(): Promise<PageSession> {
    const { user, token } = await makeSession(t);
    const v = await t.app.services.sessions.validate(token);
    return { token, session: v.session, user: v.user ?? user, pending: false };
  }
  const req = { headers: {}, ip: '127.0.0.1', socket: { remoteAddress: '127.0.0.1' } } as unknown as Request;
  const res = {} as Response;

  function route(auth: ServedModuleRoute['def']['auth'], ran: string[], middleware?: ServedModuleRoute['def']['middleware']): ServedModuleRoute {
    return {
      def: { method: 'get', path: '/x/bridge-only', module: 'test', auth, middleware, handler: () => void ran.push(String(auth)) } as ServedModuleRoute['def'],
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

  it('refuses a route with middleware of its own (it would be skipped)', async () => {
    const s = await pageSession();
    const ran: string[] = [];
    const err = await runModuleRoute(t.app, req, res, s, route('session', ran, [(_q, _r, next) => next()])).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/middleware of its own/);
    expect(ran).toEqual([]);
  });
});
