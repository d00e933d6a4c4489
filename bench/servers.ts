import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadSpec } from './load.js';
import { BENCH_BRIDGE_SECRET, BENCH_PASSWORD, type Prepared } from './prepare.js';
import { freePort, startChild, type ChildServer } from './processes.js';

/** The servers the benchmarks measure, and the requests they send them (`npm run bench`, `npm run bench:tail`). */

const ROOT = fileURLToPath(new URL('../..', import.meta.url)); // dist/bench/servers.js → repository root

/** `gatehouse serve` on the prepared data dir, with `env` on top of the run's (rate limits, a probe). */
export async function startGatehouse(p: Prepared, workers: number, env: Record<string, string> = {}): Promise<ChildServer> {
  const port = await freePort();
  const server = await startChild({
    name: `gatehouse serve --workers ${workers}`,
    args: [...p.cli, 'serve', '--workers', String(workers), '--data-dir', p.dataDir, '--port', String(port), '--host', '127.0.0.1'],
    env: { ...p.env, ...env, PORT: String(port) },
    port,
    readyPath: '/health',
    cwd: ROOT,
  });
  if (workers > 1) await new Promise((r) => setTimeout(r, 1500)); // let every worker finish booting
  return server;
}

/** The JSON hello baseline (bench/hello-server.ts): Express, or bare node:http. */
export async function startHello(workers: number, kind: 'express' | 'bare' = 'express', env: Record<string, string> = {}): Promise<ChildServer> {
  const port = await freePort();
  const server = await startChild({
    name: `${kind === 'bare' ? 'bare node:http hello' : 'hello'} (${workers} worker(s))`,
    args: [path.join(ROOT, 'dist', 'bench', 'hello-server.js')],
    env: { ...process.env, ...env, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', HELLO_WORKERS: String(workers), HELLO_KIND: kind },
    port,
    readyPath: '/health',
  });
  if (workers > 1) await new Promise((r) => setTimeout(r, 1500));
  return server;
}

/** A session of a benchmark user, by POST /auth/login over HTTP. */
export async function login(url: string, email: string): Promise<string> {
  const r = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password: BENCH_PASSWORD }),
  });
  const body = (await r.json().catch(() => ({}))) as { sessionId?: string; session_id?: string; error?: string };
  const id = body.sessionId ?? body.session_id;
  if (!r.ok || !id) throw new Error(`login failed: ${r.status} ${JSON.stringify(body)}`);
  return id;
}

export const bridgeHeaders = (session: string) => ({
  'Content-Type': 'application/json',
  'X-Bridge-Secret': BENCH_BRIDGE_SECRET,
  'X-Session-ID': session,
});

/** GET /auth/validation with the session in X-Session-ID. */
export const validationSpec = (url: string, session: string, connections: number): LoadSpec => ({
  url: `${url}/auth/validation`,
  headers: { 'X-Session-ID': session },
  connections,
});

export const validationPostHeaders = (session: string) => ({ 'Content-Type': 'application/json', 'X-Session-ID': session });

/** POST /auth/validation as the legacy client sends it: an empty JSON body, the session in X-Session-ID. */
export const validationPostSpec = (url: string, session: string, connections: number): LoadSpec => ({
  url: `${url}/auth/validation`,
  method: 'POST',
  headers: validationPostHeaders(session),
  body: '{}',
  connections,
});

/** POST /auth/bridge/validate with the bench's bridge secret and the session in headers, an empty JSON body. */
export const bridgeSpec = (url: string, session: string, connections: number): LoadSpec => ({
  url: `${url}/auth/bridge/validate`,
  method: 'POST',
  headers: bridgeHeaders(session),
  body: '{}',
  connections,
});
