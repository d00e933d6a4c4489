import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { readRaw } from '../src/http/middleware/json-body.js';
import { envNumber, note, out, table } from './harness.js';
import { measure, round, type Measurement } from './load.js';

/**
 * `node dist/bench/json-body.js`: the hand-written read the JSON body reader used to make (a body that
 * came in the packet with the headers taken in one read() in a microtask, relying on Node parsing the
 * whole packet before microtasks run) against the app's reader (src/http/middleware/json-body.ts,
 * readRaw: the stream's 'data' and 'end'), each in a bare node:http server in a child process
 * answering a small POST body, measured in alternating rounds with the same load. The ratio printed
 * is packet read ÷ app reader; about 1 means the trick buys nothing.
 */

const READER = process.env.JSON_BODY_READER;

/** The former fast path; falls back to the app's reader when the body is not all there yet. */
function packetRead(req: http.IncomingMessage, length: number, done: (err: Error | null, raw: Buffer | null) => void): void {
  queueMicrotask(() => {
    if (req.readableLength === length && !req.readableFlowing && !req.destroyed) {
      const raw = req.read(length) as Buffer | null;
      if (raw && raw.length === length) return done(null, raw);
    }
    readRaw(req, length, done);
  });
}

function serve(): void {
  const server = http.createServer((req, res) => {
    const length = Number(req.headers['content-length'] ?? 0);
    const answer = (err: Error | null, raw: Buffer | null) => {
      const body = err
        ? '{"success":false}'
        : JSON.stringify({ success: true, got: (JSON.parse(raw!.toString('utf8')) as { session_id?: string }).session_id });
      res.writeHead(err ? 400 : 200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (READER === 'packet') packetRead(req, length, answer);
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
  const servers = { packet: await start('packet'), readRaw: await start('readRaw') };
  const body = JSON.stringify({ session_id: 'ses_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG' });
  const results: Record<string, Measurement[]> = { packet: [], readRaw: [] };
  try {
    for (let r = 0; r < rounds; r++) {
      for (const key of ['packet', 'readRaw'] as const) {
        note(`${key}, round ${r + 1} of ${rounds}`);
        const spec = { url: servers[key].url, method: 'POST' as const, headers: { 'Content-Type': 'application/json' }, body, connections: 50 };
        results[key].push(await measure(key, spec, { ...timing, warmupSec: r === 0 ? timing.warmupSec : 0 }));
      }
    }
  } finally {
    servers.packet.stop();
    servers.readRaw.stop();
  }
  const ratios = results.packet.map((m, i) => round(m.rps / results.readRaw[i].rps, 3));
  out(
    table(
      ['round', 'packet read req/s', 'app reader req/s', 'packet ÷ app reader'],
      ratios.map((x, i) => [String(i + 1), results.packet[i].rps.toFixed(0), results.readRaw[i].rps.toFixed(0), x.toFixed(3)]),
    ),
  );
  out(`median packet read ÷ app reader: ${[...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]}`);
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
