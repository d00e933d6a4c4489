/*
 * The cost of counting one validation in the metrics (one request counted and timed, two cache lookups):
 * prom-client's own counter and histogram, as before, against the app's metrics (src/metrics/request-tally.ts).
 * `node dist/bench/metrics-cost.js` after `npm run build`; alternating rounds, prints ns per counted
 * request and the number of scavenges it took (a measure of what it allocates).
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Counter, Histogram, Registry } from 'prom-client';
import { createMetrics } from '../src/metrics/metrics.js';

const N = Number(process.env.BENCH_HITS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Scavenges (young-generation collections) seen while `fn` runs. */
async function scavenges(fn: () => void): Promise<number> {
  let n = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) n++;
  });
  obs.observe({ entryTypes: ['gc'] });
  fn();
  // The entries are delivered after the run, on a later turn.
  await new Promise((r) => setTimeout(r, 50));
  obs.disconnect();
  return n;
}

function promClient(): (seconds: number) => void {
  const registry = new Registry();
  const requests = new Counter({ name: 'r_total', help: 'h', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const latency = new Histogram({ name: 'l_seconds', help: 'h', labelNames: ['method', 'route'], buckets: BOUNDS, registers: [registry] });
  const lookups = new Counter({ name: 'c_total', help: 'h', labelNames: ['cache', 'result'], registers: [registry] });
  return (seconds) => {
    requests.inc({ method: 'GET', route: '/auth/validation', status: String(200) });
    latency.observe({ method: 'GET', route: '/auth/validation' }, seconds);
    lookups.inc({ cache: 'session', result: 'local' });
    lookups.inc({ cache: 'user', result: 'local' });
  };
}

function tallied(): (seconds: number) => void {
  const m = createMetrics();
  return (seconds) => {
    m.httpRequest('GET', '/auth/validation', 200, seconds);
    m.cacheLookup('session', 'local');
    m.cacheLookup('user', 'local');
  };
}

async function measure(count: (seconds: number) => void): Promise<{ ns: number; scavenges: number }> {
  for (let i = 0; i < 10_000; i++) count(0.0004);
  gc();
  let ns = 0;
  const seen = await scavenges(() => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) count(0.0002 + (i % 7) * 0.0003);
    ns = Number(process.hrtime.bigint() - t0) / N;
  });
  return { ns: Math.round(ns), scavenges: seen };
}

const rows: Record<string, { ns: number[]; scavenges: number[] }> = { 'prom-client': { ns: [], scavenges: [] }, tally: { ns: [], scavenges: [] } };
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, make] of [
    ['prom-client', promClient],
    ['tally', tallied],
  ] as const) {
    const r = await measure(make());
    rows[name].ns.push(r.ns);
    rows[name].scavenges.push(r.scavenges);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, r] of Object.entries(rows)) {
  console.log(
    `${name.padEnd(12)} ${String(median(r.ns)).padStart(6)} ns per counted request (rounds: ${r.ns.join(', ')}); scavenges per ${N}: ${r.scavenges.join(', ')}`,
  );
}
console.log(`tally ÷ prom-client time: ${(median(rows.tally.ns) / median(rows['prom-client'].ns)).toFixed(3)}`);
