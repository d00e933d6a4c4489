import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { provisionBackend, type BenchBackend } from './backend.js';
import { envNumber, note, out, runBenchmark, writeResults } from './harness.js';
import { round } from './load.js';
import { prepare, type Prepared } from './prepare.js';
import { serverNodeVersion, stopAll } from './processes.js';
import { measureRefusals, refusalChecks, refusalRows } from './refusals.js';
import { renderChecks, renderTable } from './report.js';

/**
 * `npm run bench:refusals`: the part of `npm run bench` that measures refusals against accepted
 * validations with the shipped defaults (bench/refusals.ts, bench/README.md "Refusals"), alone: about
 * a minute and a half instead of five. Same backend, servers and settings as the whole run.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url)); // dist/bench/refusals-run.js → repository root
const RESULTS = path.join(ROOT, 'bench', 'results', 'refusals-latest.json');
const TIMING = { durationSec: envNumber(process.env.BENCH_DURATION, 5), warmupSec: envNumber(process.env.BENCH_WARMUP, 2) };
const ROUNDS = Math.round(envNumber(process.env.BENCH_ROUNDS, 3));
const CONNECTIONS = envNumber(process.env.BENCH_CONNECTIONS, 50);

async function main(): Promise<number> {
  const started = Date.now();
  const loadBefore = os.loadavg().map((l) => round(l, 2));
  let backend: BenchBackend | null = null;
  let prepared: Prepared | null = null;
  const cleanup = async () => {
    await stopAll();
    if (prepared) rmSync(prepared.dataDir, { recursive: true, force: true });
    await backend?.release().catch((err) => note(`cleanup failed: ${(err as Error).message}`));
    backend = null;
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  try {
    backend = await provisionBackend(process.env);
    note(`database ${backend.created ? '(fresh) ' : ''}ready; redis prefix ${backend.redisPrefix}`);
    prepared = await prepare(ROOT, backend, 2);
    note(prepared.initNote ?? 'data dir initialised with gatehouse init');
    const nodeVersion = serverNodeVersion();
    note(`servers run on Node ${nodeVersion}`);
    const phase = await measureRefusals(prepared, { rounds: ROUNDS, timing: TIMING, connections: CONNECTIONS });
    const rows = refusalRows(phase);
    const checks = refusalChecks(phase);
    const pass = checks.every((c) => c.target === undefined || c.pass);
    out();
    out(renderTable(rows));
    out();
    out(renderChecks(checks));
    out();
    out(`${pass ? 'PASS' : 'FAIL'}: ${checks.filter((c) => c.pass === false).length} of ${checks.filter((c) => c.target !== undefined).length} targets missed`);
    const result = {
      date: new Date().toISOString(),
      runSeconds: round((Date.now() - started) / 1000, 1),
      machine: {
        cores: os.availableParallelism(),
        cpu: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        loadavgBefore: loadBefore,
        loadavgAfter: os.loadavg().map((l) => round(l, 2)),
      },
      setup: {
        ...TIMING,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        serverNode: nodeVersion,
        env: { RATE_LIMITS_ENABLED: 'true', LOG_LEVEL: 'info', 'RATE_LIMIT_*': 'shipped defaults' },
      },
      measurements: Object.fromEntries(rows.map((r) => [r.key, { route: r.label, ...r.m }])),
      rounds: phase,
      checks,
      pass,
    };
    writeResults(ROOT, RESULTS, result);
    return pass ? 0 : 1;
  } finally {
    await cleanup();
  }
}

runBenchmark('bench:refusals', main);
