import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

type Operation = { summary?: unknown; tags: string[] };
type Doc = { paths: Record<string, Record<string, Operation>>; tags: { name: string }[] };

let t: TestApp;
beforeAll(async () => {
  // Social sign-in on, so its routes are served (and documented) too; then every shipped module.
  t = await startTestApp({ env: { SOCIAL_LOGIN: 'true' } });
  for (const m of t.app.modules.registry()) await t.app.modules.hub.install([m.id], { actor: 'test' } as never);
}, 120_000);
afterAll(async () => t?.close());

describe('operation summaries at /docs (GET /openapi.json)', () => {
  it('when every module is installed, then each operation says what it does in a short line of its own', async () => {
    const r = await t.request('GET', '/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.body as Doc;
    // Every module with routes is in the document, so its operations are checked too.
    const withRoutes = t.app.modules.registry().filter((m) => m.routes.length > 0);
    expect(doc.tags.map((x) => x.name)).toEqual(expect.arrayContaining(['core', ...withRoutes.map((m) => m.id)]));

    const problems: string[] = [];
    const bySummary = new Map<string, string[]>();
    let count = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        count += 1;
        const where = `${method.toUpperCase()} ${path}`;
        const summary = typeof op.summary === 'string' ? op.summary.trim() : '';
        if (!summary) problems.push(`${where}: no summary`);
        else if (summary.length >= 80) problems.push(`${where}: ${summary.length} characters`);
        // Not the path again, with or without the method, in either spelling of its parameters.
        const expressPath = path.replace(/\{(\w+)\}/g, ':$1');
        const bare = summary.replace(new RegExp(`^${method}\\s+`, 'i'), '');
        if (bare === path || bare === expressPath) problems.push(`${where}: the summary repeats the path ("${summary}")`);
        if (/^[A-Z]+ \//.test(summary)) problems.push(`${where}: the summary starts with a method and path ("${summary}")`);
        bySummary.set(summary, [...(bySummary.get(summary) ?? []), where]);
      }
    }
    expect(count).toBeGreaterThan(150);
    expect(problems).toEqual([]);
    // No two operations share a summary: an alias says which route it stands for.
    expect([...bySummary].filter(([, ops]) => ops.length > 1)).toEqual([]);
  });
});
