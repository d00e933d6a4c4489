import { describe, expect, it } from 'vitest';
import { laneBudget, LANE_DEFS, PLAIN_HEADERS } from '../../src/http/fast-lane/lane-routes.js';
import { BRIDGE_SECRET_HEADER, validationRead } from '../../src/http/middleware/rate-limit-classes.js';
import { SESSION_TOKEN_HEADERS } from '../../src/http/request-context.js';
import { coreRoutes } from '../../src/http/routes/index.js';

/** The fast lane's facts are the route definitions' own (issue 61): nothing it relies on is a copy. */
describe('the fast lane reads its routes from their definitions', () => {
  it('when the lane starts, then its five reads are the very route objects Express serves', () => {
    expect(LANE_DEFS.map((d) => `${d.method.toUpperCase()} ${d.path}`)).toEqual([
      'GET /auth/validation',
      'POST /auth/validation',
      'POST /auth/bridge/validate',
      'GET /auth/me',
      'GET /auth/user/me',
    ]);
    for (const d of LANE_DEFS) expect(coreRoutes).toContain(d);
  });

  it("when the lane counts a request, then it uses the routes' own budget rule, whose classes the gate's classifier names", () => {
    const rule = laneBudget();
    expect(rule).toBe(validationRead.budget);
    expect([rule.secretClass, rule.wrongSecretClass, rule.sessionClass, rule.otherwiseClass]).toEqual(validationRead.classes);
    expect(rule.bySecret('x', null)).toBeNull();
    expect(rule.bySecret('', () => true)).toBeNull();
    expect(rule.bySecret('right', (s) => s === 'right')).toBe('secret');
    expect(rule.bySecret('wrong', (s) => s === 'right')).toBe('wrong-secret');
  });

  it('when the lane checks headers, then the ones the pipeline reads for the session and the bridge secret are plain', () => {
    for (const h of [...SESSION_TOKEN_HEADERS, BRIDGE_SECRET_HEADER]) expect(PLAIN_HEADERS.has(h)).toBe(true);
    expect(PLAIN_HEADERS.has('authorization')).toBe(false);
  });
});
