import express, { type RequestHandler } from 'express';
import { describe, expect, it } from 'vitest';
import { createCoreRouter, exactRouteTable } from '../../src/http/exact-routes.js';

const answer =
  (name: string): RequestHandler =>
  (_req, res) =>
    void res.json({ route: name });

async function serve(routes: { method: string; path: string; handlers: RequestHandler[] }[], paths: string[]): Promise<string[]> {
  const app = express();
  app.use(...createCoreRouter(routes));
  app.use((_req, res) => void res.status(404).json({ route: null }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as { port: number };
    const out: string[] = [];
    for (const p of paths) out.push(((await (await fetch(`http://127.0.0.1:${port}${p}`)).json()) as { route: string }).route);
    return out;
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe('the compiled route table', () => {
  it('when a literal path comes after a parameter route that matches it, then the earlier route keeps it, as in Express', async () => {
    const routes = [
      { method: 'get', path: '/x/:id', handlers: [answer('param')] },
      { method: 'get', path: '/x/me', handlers: [answer('literal')] },
      { method: 'get', path: '/y/me', handlers: [answer('literal-first')] },
      { method: 'get', path: '/y/:id', handlers: [answer('param-after')] },
      { method: 'post', path: '/x/me', handlers: [answer('other-method')] },
    ];
    expect([...exactRouteTable(routes).keys()]).toEqual(['GET /y/me', 'POST /x/me']);
    expect(await serve(routes, ['/x/me', '/x/42', '/y/me', '/y/42'])).toEqual(['param', 'param', 'literal-first', 'param-after']);
  });

  it('when two routes share a key, then the first wins; wildcard routes shadow conservatively', () => {
    const table = exactRouteTable([
      { method: 'get', path: '/a', id: 1 },
      { method: 'get', path: '/a', id: 2 },
      { method: 'get', path: '/files/*rest', id: 3 },
      { method: 'get', path: '/files/readme', id: 4 },
      { method: 'get', path: '/filesystem', id: 5 },
      { method: 'get', path: '/p/:id', id: 6 },
      { method: 'get', path: '/p/a/b', id: 7 },
    ]);
    expect(table.get('GET /a')?.id).toBe(1);
    expect(table.has('GET /files/readme')).toBe(false);
    // Only below the wildcard's static prefix.
    expect(table.get('GET /filesystem')?.id).toBe(5);
    expect(table.get('GET /p/a/b')?.id).toBe(7);
  });
});
