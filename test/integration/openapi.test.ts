import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputSchema, openApiPath } from '../../src/http/openapi/openapi-document.js';
import { rateLimitLabel } from '../../src/http/middleware/rate-limit.js';
import { servedRoutes } from '../../src/http/openapi/openapi.routes.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type Doc = { paths: Record<string, Record<string, any>>; openapi: string; tags: { name: string }[] };

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const fetchDoc = async (): Promise<Doc> => {
  const r = await t.request('GET', '/openapi.json');
  expect(r.status).toBe(200);
  return r.body as Doc;
};

describe('GET /openapi.json', () => {
  it('when fetched, then it is a valid OpenAPI 3.1 document', async () => {
    const doc = await fetchDoc();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // Operation ids are unique across the document.
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('when a module is installed, then its routes join the document, tagged with the module, and the document stays valid', async () => {
    const before = await fetchDoc();
    const candidate = t.app.modules
      .registry()
      .find((m) => m.routes.length > 0 && !t.app.modules.isInstalled(m.id) && t.app.modules.problems(m.id).length === 0);
    expect(candidate, 'a shipped module with routes').toBeDefined();
    const sample = openApiPath(candidate!.routes[0].path).path;
    expect(before.paths[sample]?.[candidate!.routes[0].method]).toBeUndefined();

    await t.app.modules.hub.install([candidate!.id], { actor: 'test' } as never);
    const after = await fetchDoc();
    for (const def of candidate!.routes) {
      const op = after.paths[openApiPath(def.path).path]?.[def.method];
      expect(op, `${def.method} ${def.path}`).toBeDefined();
      expect(op.tags).toEqual([candidate!.id]);
      expect(op['x-gatehouse-module']).toBe(candidate!.id);
    }
    expect(after.tags.map((x) => x.name)).toContain(candidate!.id);
    expect((await new Validator().validate(after as never)).valid).toBe(true);
  });

  it('when compared with the route table, then every route served is documented with its auth, rate-limit class and path parameters', async () => {
    const doc = await fetchDoc();
    const routes = servedRoutes(t.app, coreRoutes);
    expect(routes.length).toBeGreaterThanOrEqual(coreRoutes.length);
    for (const { def } of routes) {
      const { path, params } = openApiPath(def.path);
      const op = doc.paths[path]?.[def.method];
      expect(op, `${def.method.toUpperCase()} ${def.path} is documented`).toBeDefined();
      expect(op['x-gatehouse-rate-limit']).toBe(rateLimitLabel(def.rateLimit));
      // A classifier's label is its classes joined by `|` (one class: per session rather than per address).
      if (typeof def.rateLimit === 'function') expect(op['x-gatehouse-rate-limit']).toBe(def.rateLimit.classes.join('|'));
      const mode = typeof def.auth === 'function' ? def.auth(t.app.config) : def.auth;
      expect(op['x-gatehouse-auth']).toEqual(typeof mode === 'object' ? { roles: mode.roles } : mode);
      expect(op.security.length === 0).toBe(mode === 'public');
      const documentedParams = (op.parameters ?? []).filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name);
      expect(documentedParams.sort()).toEqual([...params].sort());
      if (def.rateLimit !== false) expect(op.responses['429']).toBeDefined();
    }
    // Nothing documented that is not served.
    const served = new Set(routes.map(({ def }) => `${def.method} ${openApiPath(def.path).path}`));
    for (const [path, item] of Object.entries(doc.paths))
      for (const method of Object.keys(item)) expect(served.has(`${method} ${path}`), `${method} ${path}`).toBe(true);
  });

  it('when a route validates its body or query, then the documented schema is the JSON Schema of the very zod schema it enforces', async () => {
    const doc = await fetchDoc();
    let bodies = 0;
    for (const { def } of servedRoutes(t.app, coreRoutes)) {
      const op = doc.paths[openApiPath(def.path).path][def.method];
      if (def.body) {
        bodies++;
        expect(op.requestBody.content['application/json'].schema, `${def.method} ${def.path}`).toEqual(inputSchema(def.body));
      } else {
        expect(op.requestBody?.content?.['application/json']).toBeUndefined();
      }
      if (def.query) {
        const props = (inputSchema(def.query).properties ?? {}) as Record<string, unknown>;
        for (const [name, schema] of Object.entries(props)) {
          expect(op.parameters.find((p: { name: string; in: string }) => p.in === 'query' && p.name === name)?.schema, `${def.path}?${name}`).toEqual(schema);
        }
      }
    }
    expect(bodies).toBeGreaterThan(10);
  });

  it('when a body leaves out a field the document marks required, then the API refuses it with 400 naming that field', async () => {
    const doc = await fetchDoc();
    const { token } = await makeSession(t, { user_type: 'superadmin' });
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      if (path.includes('{')) continue;
      for (const [method, op] of Object.entries(item)) {
        const required: string[] = op.requestBody?.content?.['application/json']?.schema?.required ?? [];
        if (!required.length) continue;
        const r = await t.request(method.toUpperCase(), path, { body: {}, session: token, bridge: true });
        expect(r.status, `${method.toUpperCase()} ${path}`).toBe(400);
        expect(r.body.code).toBe('VALIDATION_ERROR');
        const fields = JSON.stringify(r.body.details ?? r.body.error);
        expect(
          required.some((f) => fields.includes(f)),
          `${method.toUpperCase()} ${path}: ${fields} names one of ${required}`,
        ).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(3);
  });
});

describe('GET /docs', () => {
  it('when the reference page is opened, then it and everything it loads come from this server, under a CSP that allows nothing else', async () => {
    const page = await t.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.text).not.toMatch(/https?:\/\//);
    const srcs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs).toEqual(expect.arrayContaining(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/init.js']));
    for (const src of srcs.filter((s) => s.startsWith('/docs/'))) {
      const r = await t.request('GET', src);
      expect(r.status, src).toBe(200);
      expect(r.text.length, src).toBeGreaterThan(50);
    }
    expect((await t.request('GET', '/docs/init.js')).text).toContain("url: '/openapi.json'");
    expect((await t.request('GET', '/docs/swagger-ui-bundle.js')).text.length).toBeGreaterThan(500_000);
    expect((await t.request('GET', '/docs/package.json')).status).toBe(404);
  });
});
