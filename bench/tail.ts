import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { provisionBackend, type BenchBackend } from './backend.js';
import { envNumber, note, out, runBenchmark, table, writeResults } from './harness.js';
import { measure, round, type LoadSpec } from './load.js';
import type { ProbeRecord } from './loop-probe.js';
import { paced, type SlowAnswer } from './paced.js';
import { prepare, type Prepared } from './prepare.js';
import { serverNodeVersion, stopAll, type ChildServer } from './processes.js';
import { bridgeSpec, login, startGatehouse, startHello, validationSpec } from './servers.js';

/**
 * `npm run bench:tail`: what the slowest answers at equal load waited for (bench/README.md, "What the
 * p99 is made of"). Bare node:http, GET /auth/validation and POST /auth/bridge/validate at one paced rate,
 * as `npm run bench` measures their p99, each server carrying bench/loop-probe.ts; every answer at or
 * above the window's p99 is put down to what overlapped it in the server: a garbage collection, a stall
 * of its event loop while it was busy, one while it was not running, or neither (it waited in a queue:
 * the server's or the load generator's). Informational: no targets, exit 0 unless the harness fails.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url)); // dist/bench/tail.js → repository root
const RESULTS = path.join(ROOT, 'bench', 'results', 'tail-latest.json');
const PROBE = path.join(ROOT, 'dist', 'bench', 'loop-probe.js');
const ROUNDS = Math.round(envNumber(process.env.BENCH_ROUNDS, 3));
const SECONDS = envNumber(process.env.BENCH_LATENCY_DURATION, 3);
const CONNECTIONS = envNumber(process.env.BENCH_CONNECTIONS, 50);
/** Clocks of two processes: an overlap is counted within this much (ms). */
const SLACK_MS = 0.5;
/** A stall counts as busy when the process used at least this share of it on the CPU. */
const BUSY_SHARE = 0.7;

type Cause = 'gc' | 'busy' | 'descheduled' | 'neither';

interface Window {
  route: string;
  round: number;
  rate: number;
  p50: number;
  p99: number;
  slow: number;
  causes: Record<Cause, number>;
  gcs: number;
  gcMs: number;
  stalls: number;
  stallMs: number;
  cpuUsPerReq: number | null;
}

/** What overlapped each slow answer, first match in the order gc, busy stall, stall while not running. */
function attribute(slow: SlowAnswer[], probe: ProbeRecord): Record<Cause, number> {
  const causes: Record<Cause, number> = { gc: 0, busy: 0, descheduled: 0, neither: 0 };
  const overlaps = (a: number, ms: number, start: number, len: number) => start < a + ms + SLACK_MS && start + len > a - SLACK_MS;
  for (const [a, ms] of slow) {
    if (probe.gcs.some(([s, len]) => overlaps(a, ms, s, len))) causes.gc += 1;
    else {
      const stall = probe.stalls.find(([s, len]) => overlaps(a, ms, s, len));
      if (!stall) causes.neither += 1;
      else if (stall[2] >= BUSY_SHARE * stall[1]) causes.busy += 1;
      else causes.descheduled += 1;
    }
  }
  return causes;
}

function probed(name: string, dir: string) {
  const file = path.join(dir, `${name}.json`);
  return { file, env: { NODE_OPTIONS: `--import ${PROBE}`, BENCH_PROBE_FILE: file } };
}

/** Asks the server for what its probe saw since the last ask (and so starts it again). */
async function readProbe(server: ChildServer, file: string): Promise<ProbeRecord> {
  rmSync(file, { force: true });
  process.kill(server.pid, 'SIGUSR2');
  for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 20));
  return JSON.parse(readFileSync(file, 'utf8')) as ProbeRecord;
}

async function main(): Promise<number> {
  const started = Date.now();
  let backend: BenchBackend | null = null;
  let prepared: Prepared | null = null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-tail-'));
  try {
    backend = await provisionBackend(process.env);
    prepared = await prepare(ROOT, backend, 2);
    const p = prepared;
    const ghProbe = probed('gatehouse', dir);
    const bareProbe = probed('bare', dir);
    const gh = await startGatehouse(p, 1, ghProbe.env);
    const bare = await startHello(1, 'bare', bareProbe.env);
    const session = await login(gh.url, p.emails[0]);
    const routes: [string, LoadSpec, ChildServer, string][] = [
      ['bare node:http', { url: `${bare.url}/hello`, connections: CONNECTIONS }, bare, bareProbe.file],
      ['GET /auth/validation', validationSpec(gh.url, session, CONNECTIONS), gh, ghProbe.file],
      ['POST /auth/bridge/validate', bridgeSpec(gh.url, session, CONNECTIONS), gh, ghProbe.file],
    ];
    // As `npm run bench` picks it: half of the slowest route's flat-out req/s (the bridge's).
    let rate = envNumber(process.env.BENCH_TAIL_RATE, 0);
    if (!rate) {
      note('the bridge flat out for 3 s, to pick the rate');
      const flat = await measure('bridge-flat', routes[2][1], { durationSec: 3, warmupSec: 2 }, gh.cpuMs);
      rate = Math.max(100, Math.round(flat.rps / 2 / 100) * 100);
    }
    note(`servers on Node ${serverNodeVersion()}; ${rate} req/s for ${SECONDS} s per window, ${ROUNDS} rounds`);
    const windows: Window[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [route, spec, server, file] of routes) {
        note(`${route}, round ${r + 1} of ${ROUNDS}`);
        const m = await paced(route, spec, rate, { warmupSec: 1, durationSec: SECONDS, keepSlow: true }, server.cpuMs);
        const probe = await readProbe(server, file);
        const slow = m.slow ?? [];
        const from = m.windowStart ?? 0;
        const inWindow = <T extends [number, number, number]>(xs: T[]) => xs.filter(([s]) => s >= from);
        const gcs = inWindow(probe.gcs);
        const stalls = inWindow(probe.stalls);
        windows.push({
          route,
          round: r + 1,
          rate,
          p50: m.p50,
          p99: m.p99,
          slow: slow.length,
          causes: attribute(slow, probe),
          gcs: gcs.length,
          gcMs: round(
            gcs.reduce((a, g) => a + g[1], 0),
            1,
          ),
          stalls: stalls.length,
          stallMs: round(
            stalls.reduce((a, s) => a + s[1], 0),
            1,
          ),
          cpuUsPerReq: m.cpuUsPerReq,
        });
      }
    }
    const pct = (n: number, of: number) => (of ? `${Math.round((100 * n) / of)} %` : '-');
    out(
      table(
        [
          'route',
          'round',
          'req/s',
          'p50 ms',
          'p99 ms',
          'server CPU µs/req',
          'answers ≥ p99',
          'GC',
          'stall, busy',
          'stall, not running',
          'neither',
          'GCs (ms)',
          'stalls ≥ 2 ms (ms)',
        ],
        windows.map((w) => [
          w.route,
          String(w.round),
          String(w.rate),
          String(w.p50),
          String(w.p99),
          String(w.cpuUsPerReq ?? '-'),
          String(w.slow),
          pct(w.causes.gc, w.slow),
          pct(w.causes.busy, w.slow),
          pct(w.causes.descheduled, w.slow),
          pct(w.causes.neither, w.slow),
          `${w.gcs} (${w.gcMs})`,
          `${w.stalls} (${w.stallMs})`,
        ]),
      ),
    );
    const result = { runSeconds: Math.round((Date.now() - started) / 1000), node: serverNodeVersion(), windows };
    writeResults(ROOT, RESULTS, result);
    return 0;
  } finally {
    await stopAll();
    if (prepared) rmSync(prepared.dataDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    await backend?.release().catch((err: Error) => note(`cleanup failed: ${err.message}`));
  }
}

runBenchmark('bench:tail', main);
