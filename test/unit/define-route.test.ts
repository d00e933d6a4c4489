import { describe, expect, it } from 'vitest';
import { defineRoute, type RouteDef } from '../../src/http/define-route.js';
import { coreRoutes } from '../../src/http/routes/index.js';

describe('defineRoute', () => {
  it('when a route declares no auth, then it is refused at registration', () => {
    const noAuth = { method: 'get', path: '/x', handler: () => ({}) } as unknown as RouteDef;
    expect(() => defineRoute(noAuth)).toThrow(/GET \/x has no auth; declare auth explicitly/);
    expect(() => defineRoute({ ...noAuth, auth: null } as unknown as RouteDef)).toThrow(/has no auth/);
  });

  it('when a role route names no role, then it is refused', () => {
    expect(() => defineRoute({ method: 'get', path: '/y', auth: { roles: [] }, handler: () => ({}) })).toThrow(/roles must name at least one/);
  });

  it('when the core API is assembled, then every route carries an auth and method+path pairs are unique', () => {
    const seen = new Set<string>();
    for (const r of coreRoutes) {
      expect(r.auth, `${r.method} ${r.path}`).toBeDefined();
      const key = `${r.method} ${r.path}`;
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
    }
    expect(coreRoutes.length).toBeGreaterThan(50);
  });
});
