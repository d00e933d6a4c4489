import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { readRaw } from '../src/http/middleware/json-body.js';
import { envNumber, note, out, table } from './harness.js';
import { measure, round, type Measurement } from './load.js';

/**
 * `node dist/bench/json-body.js`: the JSON body reader (src/http/middleware/json-body.ts, readRaw) against
 * a plain stream reader ('data' and 'end', one Buffer.concat), each in a bare node:http server in a
 * child process answering a small POST body, measured in alternating rounds with the same load.
 * Decides whether the hand-written read (which takes a body that came with the headers in one
 * read, relying on Node parsing the whole packet before microtasks run) earns its keep.
 */

const READER = process.env.JSON_BODY_READER;

function plainRead(req: http.IncomingMessage, done: (err: Error | null, raw: Buffer | null) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => done(null, Buffer.concat(chunks)));
  req.on('error', (err) => done(err, null));
}

function serve(): void {
  const server = http.createServer((req, res) => {
    const length = Number(req.headers['content-length'] ?? 0);
    const answer = (err: Error | null, raw: Buffer | null) => {
      const body = err ? '{"success":false}' : JSON.stringify({ success: true, got: (JSON.parse(raw!.toString('utf8')) as { session_id?: string }).session_id });
      res.writeHead(err ? 400 : 200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (READER === 'plain') plainRead(req, answer);
    else readRaw(req, length, answer);
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));
}

async function start(reader: string): Promise<{ url: string; stop(): void }> {
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, JSON_BODY_READER: reader } });
  const port = await new Promise<number>((r) => child.once('message', (m) => r(Number(m))));
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill('SIGTERM') };
}

async function main(): Promise<void> {
  const rounds = Math.round(envNumber(process.env.BENCH_ROUNDS, 3));
  const timing = { durationSec: envNumber(process.env.BENCH_DURATION, 5), warmupSec: 1 };
  const servers = { readRaw: await start('readRaw'), plain: await start('plain') };
  const body = JSON.stringify({ session_id: 'ses_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG' });
  const results: Record<string, Measurement[]> = { readRaw: [], plain: [] };
  try {
    for (let r = 0; r < rounds; r++) {
      for (const key of ['readRaw', 'plain'] as const) {
        note(`${key}, round ${r + 1} of ${rounds}`);
        const spec = { url: servers[key].url, method: 'POST' as const, headers: { 'Content-Type': 'application/json' }, body, connections: 50 };
        results[key].push(await measure(key, spec, { ...timing, warmupSec: r === 0 ? timing.warmupSec : 0 }));
      }
    }
  } finally {
    servers.readRaw.stop();
    servers.plain.stop();
  }
  const ratios = results.readRaw.map((m, i) => round(m.rps / results.plain[i].rps, 3));
  out(
    table(
      ['round', 'readRaw req/s', 'plain req/s', 'readRaw ÷ plain'],
      ratios.map((x, i) => [String(i + 1), results.readRaw[i].rps.toFixed(0), results.plain[i].rps.toFixed(0), x.toFixed(3)]),
    ),
  );
  out(`median readRaw ÷ plain: ${[...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]}`);
}

if (READER) serve();
else
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(2);
    },
  );
