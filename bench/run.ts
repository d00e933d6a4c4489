import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcrypt';
import { provisionBackend, type BenchBackend } from './backend.js';
import { envNumber, note, out, runBenchmark, writeResults } from './harness.js';
import { paced } from './paced.js';
import { combine, measure, round, roundRatio, type LoadSpec, type LoadTiming, type Measurement } from './load.js';
import { BENCH_PASSWORD, prepare, type Prepared } from './prepare.js';
import { serverNodeVersion, stopAll, type ChildServer } from './processes.js';
import { bridgeHeaders, bridgeSpec, login, startGatehouse, startHello, validationPostHeaders, validationPostSpec, validationSpec } from './servers.js';
import { cpuCheck, cpuScaling, ratioCheck, renderChecks, renderTable, twoWorkerCeiling, twoWorkerCheck, type Check, type Row } from './report.js';
import { measureRefusals, refusalChecks, refusalRows } from './refusals.js';

/**
 * `npm run bench`: hello baseline, session validation (GET /auth/validation, POST /auth/bridge/validate)
 * and login on the real CLI server with one and two workers, PostgreSQL + Redis. See bench/README.md.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url)); // dist/bench/run.js → repository root
const RESULTS = path.join(ROOT, 'bench', 'results', 'latest.json');

const num = envNumber;
const TIMING: LoadTiming = { durationSec: num(process.env.BENCH_DURATION, 5), warmupSec: num(process.env.BENCH_WARMUP, 2) };
const ROUNDS = Math.round(num(process.env.BENCH_ROUNDS, 3));
/** Login is bcrypt-bound (a few per second): one longer window instead of rounds. */
const LOGIN_SECONDS = num(process.env.BENCH_LOGIN_DURATION, 10);
/**
 * When the login warm-up ends, the hashes it had already handed to bcrypt still run (the attempts
 * waiting for a slot are dropped when their connections close): they finish in this pause, not in the window.
 */
const LOGIN_SETTLE_SECONDS = 0.5;
const CONNECTIONS = num(process.env.BENCH_CONNECTIONS, 50);
const LOGIN_CONNECTIONS = num(process.env.BENCH_LOGIN_CONNECTIONS, 8);
const LOGIN_USERS = Math.max(16, 2 * LOGIN_CONNECTIONS);
const TARGET_TWO_WORKERS = 1.6;
/** Issue 26's targets, against the two baselines measured in the same rounds. */
const TARGET_VALIDATION_VS_BARE = 0.5;
const TARGET_VALIDATION_VS_HELLO = 2.5;
const TARGET_BRIDGE_VS_BARE = 0.4;
/** Limits on within 15 % of off. */
const TARGET_LIMITS_ON_VS_OFF = 0.85;
/** p99 at most twice the bare server's: bare p99 ÷ route p99 ≥ 0.5. */
const TARGET_P99_VS_BARE = 0.5;
/**
 * Latency is compared at one offered load for all (see measurePhase): this fraction of the slowest
 * route's throughput in the round, for this many seconds each.
 */
const EQUAL_LOAD_FRACTION = 0.5;
const EQUAL_LOAD_SECONDS = num(process.env.BENCH_LATENCY_DURATION, 3);
/**
 * A route whose p50 at the equal load is this many times bare's, in the same round, was queueing: the
 * rate was at or past what it could take there (paced requests cost more CPU each than flat-out ones).
 */
const QUEUED_P50_FACTOR = 4;

/** req/s, p50 and p99 of a measurement relative to the hello route (latency ratios: higher is slower). */
const ratios = (m: Measurement, hello: Measurement) => ({
  rps: hello.rps > 0 ? round(m.rps / hello.rps, 3) : null,
  p50: hello.p50 > 0 ? round(m.p50 / hello.p50, 3) : null,
  p99: hello.p99 > 0 ? round(m.p99 / hello.p99, 3) : null,
});

/** Login stays at 0.9 of what bcrypt alone does on the box. */
const TARGET_LOGIN_VS_BCRYPT = 0.9;

/** A ratio computed outside the measurement pairs (limits on ÷ off, login ÷ ceiling) against its target. */
const atLeast = (name: string, ratio: number, target: number): Check => {
  const value = round(ratio, 3);
  return { name, value, target, pass: value >= target };
};

/**
 * Hashes per second with `cores` hashes always running at once, for `seconds`: the ceiling as the
 * machine gives it (two vCPUs that share a physical core hash at less than twice one's speed).
 */
async function parallelHashRps(rounds: number, cores: number, seconds = 4): Promise<number> {
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: cores }, async () => {
      while (performance.now() < end) {
        await bcrypt.hash(BENCH_PASSWORD, rounds);
        done += 1;
      }
    }),
  );
  return round(done / ((performance.now() - t0) / 1000), 2);
}

async function medianHashMs(rounds: number, samples = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await bcrypt.hash(BENCH_PASSWORD, rounds);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return round(times[Math.floor(times.length / 2)], 1);
}

/**
 * Rate limits as in production (on, counted in Redis), with figures no measurement reaches: what is
 * measured is the cost of counting (the validation reads count per session and per bridge secret).
 */
const LIMITS_ON: Record<string, string> = {
  RATE_LIMITS_ENABLED: 'true',
  RATE_LIMIT_SESSION: '1000000000/5m',
  RATE_LIMIT_BRIDGE: '1000000000/5m',
  RATE_LIMIT_DEFAULT: '1000000000/5m',
  RATE_LIMIT_LOGIN: '1000000000/5m',
};

/** One request of each kind must succeed before it is worth measuring. */
async function sanity(url: string, session: string): Promise<void> {
  const v = await fetch(`${url}/auth/validation`, { headers: { 'X-Session-ID': session } });
  if (v.status !== 200) throw new Error(`GET /auth/validation answered ${v.status}: ${await v.text()}`);
  const p = await fetch(`${url}/auth/validation`, { method: 'POST', headers: validationPostHeaders(session), body: '{}' });
  if (p.status !== 200) throw new Error(`POST /auth/validation answered ${p.status}: ${await p.text()}`);
  const b = await fetch(`${url}/auth/bridge/validate`, { method: 'POST', headers: bridgeHeaders(session), body: '{}' });
  if (b.status !== 200) throw new Error(`POST /auth/bridge/validate answered ${b.status}: ${await b.text()}`);
}

interface Phase {
  session: string;
  hello: Measurement[];
  bare: Measurement[];
  validation: Measurement[];
  /** POST /auth/validation (the legacy client's call), one worker only: for information. */
  validationPost: Measurement[];
  bridge: Measurement[];
  /** The same two routes on a second server with rate limits on, in the same rounds (one worker only). */
  validationLimited: Measurement[];
  bridgeLimited: Measurement[];
  /** Bare and the routes again, each round, all at the same fixed request rate (latency, not throughput). */
  atEqualLoad: Partial<Record<Key, Measurement[]>>;
  login: Measurement | null;
}

/** What a round measures, in order: each route beside its limits-on twin, so the on ÷ off pairs are back to back. */
const KEYS = ['hello', 'bare', 'validation', 'validationLimited', 'validationPost', 'bridge', 'bridgeLimited'] as const;
type Key = (typeof KEYS)[number];
const LABELS: Record<Key, string> = {
  hello: 'GET /hello (bare express)',
  bare: 'GET /hello (bare node:http)',
  validation: 'GET /auth/validation',
  validationLimited: 'GET /auth/validation, limits on',
  validationPost: 'POST /auth/validation',
  bridge: 'POST /auth/bridge/validate',
  bridgeLimited: 'POST /auth/bridge/validate, limits on',
};
/** What is measured again at an equal offered load, for latency: bare node:http and the Gatehouse routes. */
const AT_EQUAL_LOAD: readonly Key[] = ['bare', 'validation', 'validationLimited', 'bridge', 'bridgeLimited'];

/**
 * Hello and Gatehouse with the same number of workers, both running; each round measures hello,
 * validation and bridge validation one after the other, so a ratio compares measurements taken
 * seconds apart (the machine's speed drifts over minutes when it is shared). With `limited`, a second
 * Gatehouse with rate limits on runs beside them and each round also measures its two routes, so
 * limits on ÷ off is a same-round ratio too. Login once at the end.
 */
async function measurePhase(p: Prepared, workers: number, session: string | null, opts: { limited?: boolean } = {}): Promise<Phase> {
  const hello = await startHello(workers);
  const bare = await startHello(workers, 'bare');
  const server = await startGatehouse(p, workers);
  const limitedServer = opts.limited ? await startGatehouse(p, workers, LIMITS_ON) : null;
  const servers = [server, limitedServer].filter((s): s is ChildServer => s !== null);
  try {
    const sid = session ?? (await login(server.url, p.emails[0]));
    for (const s of servers) await sanity(s.url, sid);
    const validation = (s: ChildServer): [LoadSpec, ChildServer] => [validationSpec(s.url, sid, CONNECTIONS), s];
    const bridge = (s: ChildServer): [LoadSpec, ChildServer] => [bridgeSpec(s.url, sid, CONNECTIONS), s];
    const specs: Partial<Record<Key, [LoadSpec, ChildServer]>> = {
      hello: [{ url: `${hello.url}/hello`, connections: CONNECTIONS }, hello],
      bare: [{ url: `${bare.url}/hello`, connections: CONNECTIONS }, bare],
      validation: validation(server),
      bridge: bridge(server),
      ...(limitedServer && {
        validationLimited: validation(limitedServer),
        validationPost: [validationPostSpec(server.url, sid, CONNECTIONS), server] as [LoadSpec, ChildServer],
        bridgeLimited: bridge(limitedServer),
      }),
    };
    const out = Object.fromEntries(KEYS.map((k) => [k, [] as Measurement[]])) as Record<Key, Measurement[]>;
    const keys = KEYS.filter((k) => specs[k]);
    const equalKeys = opts.limited ? AT_EQUAL_LOAD.filter((k) => specs[k]) : [];
    const atEqualLoad = Object.fromEntries(equalKeys.map((k) => [k, [] as Measurement[]])) as Partial<Record<Key, Measurement[]>>;
    for (let round = 0; round < ROUNDS; round++) {
      for (const key of keys) {
        const [spec, target] = specs[key]!;
        note(`${key}, ${workers} worker(s), round ${round + 1} of ${ROUNDS}`);
        const timing = { durationSec: TIMING.durationSec, warmupSec: round === 0 ? TIMING.warmupSec : 0 };
        out[key].push(await measure(`${key}-${workers}w`, spec, timing, target.cpuMs));
      }
      // Latency at one offered load for all (bench/paced.ts). Flat out, with a fixed number of
      // connections, each request waits behind the others (p99 ≈ connections ÷ throughput), so a p99
      // taken there only restates the throughput ratio. At the same rate, below every server's
      // capacity, it is the time a request takes, queueing and pauses included.
      if (equalKeys.length === 0) continue;
      const slowest = Math.min(...equalKeys.map((k) => out[k][round].rps));
      const rate = Math.max(100, Math.round((slowest * EQUAL_LOAD_FRACTION) / 100) * 100);
      for (const key of equalKeys) {
        const [spec, target] = specs[key]!;
        note(`${key} at ${rate} req/s, ${workers} worker(s), round ${round + 1} of ${ROUNDS}`);
        // A second at the rate first (discarded): the flat-out run before leaves garbage and a heap to settle.
        const m = await paced(`${key}-${workers}w-at-${rate}`, spec, rate, { warmupSec: 1, durationSec: EQUAL_LOAD_SECONDS }, target.cpuMs);
        note(`  p50 ${m.p50} ms, p99 ${m.p99} ms`);
        atEqualLoad[key]!.push(m);
      }
    }
    note(`POST /auth/login, ${workers} worker(s)`);
    const loginM = await measure(
      `login-${workers}w`,
      {
        url: `${server.url}/auth/login`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        bodies: p.emails.map((email) => JSON.stringify({ email, password: BENCH_PASSWORD })),
        connections: LOGIN_CONNECTIONS,
      },
      { durationSec: LOGIN_SECONDS, warmupSec: TIMING.warmupSec, settleSec: LOGIN_SETTLE_SECONDS },
      server.cpuMs,
    );
    return { session: sid, ...out, atEqualLoad, login: loginM };
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- server output ---\n${servers.map((s) => s.output()).join('\n')}`);
  } finally {
    await Promise.all([...servers.map((s) => s.stop()), hello.stop(), bare.stop()]);
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const cores = os.availableParallelism();
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
    prepared = await prepare(ROOT, backend, LOGIN_USERS);
    note(prepared.initNote ?? 'data dir initialised with gatehouse init');
    const nodeVersion = serverNodeVersion();
    note(`servers run on Node ${nodeVersion} (BENCH_NODE; the bench itself and its load generator on ${process.version})`);

    const hashMs = await medianHashMs(prepared.bcryptRounds);
    const ceiling = round(cores / (hashMs / 1000), 1);
    note(`bcrypt cost ${prepared.bcryptRounds}: ${hashMs} ms per hash → login ceiling ${ceiling} req/s on ${cores} cores`);
    const measuredCeiling = await parallelHashRps(prepared.bcryptRounds, cores);
    note(`bcrypt with ${cores} hashes at once: ${measuredCeiling} hashes/s (the measured ceiling)`);

    const one = await measurePhase(prepared, 1, null, { limited: true });
    const two = await measurePhase(prepared, 2, one.session);
    // Refusals ÷ accepted validations with the shipped defaults (limits on, LOG_LEVEL=info): bench/refusals.ts.
    const refusals = await measureRefusals(prepared, { rounds: ROUNDS, timing: TIMING, connections: CONNECTIONS });
    const m = {
      hello1: combine(one.hello),
      hello2: combine(two.hello),
      bare1: combine(one.bare),
      bare2: combine(two.bare),
      validation1: combine(one.validation),
      validation2: combine(two.validation),
      bridge1: combine(one.bridge),
      bridge2: combine(two.bridge),
      validationLimited: combine(one.validationLimited),
      bridgeLimited: combine(one.bridgeLimited),
      validationPost: combine(one.validationPost),
    };
    const vsHello = {
      validation1: roundRatio(one.validation, one.hello),
      validation2: roundRatio(two.validation, two.hello),
      bridge1: roundRatio(one.bridge, one.hello),
      bridge2: roundRatio(two.bridge, two.hello),
      validationLimited: roundRatio(one.validationLimited, one.hello),
      bridgeLimited: roundRatio(one.bridgeLimited, one.hello),
      validationPost: roundRatio(one.validationPost, one.hello),
    };
    const vsBare = {
      validation1: roundRatio(one.validation, one.bare),
      bridge1: roundRatio(one.bridge, one.bare),
      validationLimited: roundRatio(one.validationLimited, one.bare),
      bridgeLimited: roundRatio(one.bridgeLimited, one.bare),
      validationPost: roundRatio(one.validationPost, one.bare),
      hello1: roundRatio(one.hello, one.bare),
    };
    /** Limits on ÷ off: the two servers' same-round figures. */
    const limitsOnOff = {
      validation: roundRatio(one.validationLimited, one.validation),
      bridge: roundRatio(one.bridgeLimited, one.bridge),
    };
    /** Bare p99 ÷ the route's p99; a check at equal load (naming the rounds in which the route queued), for information flat out. */
    const p99Check = (name: string, route: Measurement, bare: Measurement, target?: number, queued: string[] = []): Check => {
      const value = route.p99 > 0 ? round(bare.p99 / route.p99, 3) : 0;
      const note = `p99 ${route.p99} ms vs bare ${bare.p99} ms${queued.length ? `; a standing queue in ${queued.join(', ')}` : ''}`;
      const clean = route.non2xx + route.errors + route.timeouts + bare.non2xx + bare.errors + bare.timeouts === 0;
      return target === undefined ? { name, value, note } : { name, value, target, pass: clean && value >= target, note };
    };
    const eq = (k: Key) => combine(one.atEqualLoad[k]!);
    const queued = (k: Key): string[] =>
      one.atEqualLoad[k]!.flatMap((m, i) => (m.p50 >= QUEUED_P50_FACTOR * one.atEqualLoad.bare![i].p50 ? [`round ${i + 1} (p50 ${m.p50} ms)`] : []));
    /** A route's p99 at the equal load against bare's, with the rounds in which it queued. */
    const equalLoadCheck = (name: string, k: Key): Check => p99Check(name, eq(k), eq('bare'), TARGET_P99_VS_BARE, queued(k));
    const equalRate = one.atEqualLoad.bare!.map((x) => x.name.replace(/.*-at-/, '')).join(', ');
    const hello = m.hello1;

    const rows: (Row & { vsHello: number | null })[] = [
      { key: 'hello-1w', label: 'GET /hello (bare express)', workers: 1, m: m.hello1, vsHello: 1 },
      { key: 'hello-2w', label: 'GET /hello (bare express)', workers: 2, m: m.hello2, vsHello: 1 },
      { key: 'bare-1w', label: 'GET /hello (bare node:http)', workers: 1, m: m.bare1, vsHello: roundRatio(one.bare, one.hello) },
      { key: 'bare-2w', label: 'GET /hello (bare node:http)', workers: 2, m: m.bare2, vsHello: roundRatio(two.bare, two.hello) },
      { key: 'validation-1w', label: 'GET /auth/validation', workers: 1, m: m.validation1, vsHello: vsHello.validation1 },
      { key: 'validation-2w', label: 'GET /auth/validation', workers: 2, m: m.validation2, vsHello: vsHello.validation2 },
      { key: 'validation-post-1w', label: 'POST /auth/validation', workers: 1, m: m.validationPost, vsHello: vsHello.validationPost },
      { key: 'bridge-1w', label: 'POST /auth/bridge/validate', workers: 1, m: m.bridge1, vsHello: vsHello.bridge1 },
      { key: 'bridge-2w', label: 'POST /auth/bridge/validate', workers: 2, m: m.bridge2, vsHello: vsHello.bridge2 },
      { key: 'validation-1w-limits', label: 'GET /auth/validation, limits on', workers: 1, m: m.validationLimited, vsHello: vsHello.validationLimited },
      { key: 'bridge-1w-limits', label: 'POST /auth/bridge/validate, limits on', workers: 1, m: m.bridgeLimited, vsHello: vsHello.bridgeLimited },
      ...AT_EQUAL_LOAD.map((k) => ({
        key: `${k}-1w-equal-load`,
        label: `${LABELS[k]} at ${equalRate} req/s`,
        workers: 1,
        m: eq(k),
        vsHello: null,
      })),
      { key: 'login-1w', label: 'POST /auth/login', workers: 1, m: one.login!, vsHello: null },
      { key: 'login-2w', label: 'POST /auth/login', workers: 2, m: two.login!, vsHello: null },
      ...refusalRows(refusals),
    ];
    const checks: Check[] = [
      ratioCheck('GET /auth/validation, 1 worker ÷ bare node:http', m.validation1, m.bare1, TARGET_VALIDATION_VS_BARE, vsBare.validation1),
      ratioCheck('GET /auth/validation, 1 worker ÷ express hello', m.validation1, hello, TARGET_VALIDATION_VS_HELLO, vsHello.validation1),
      ratioCheck('POST /auth/bridge/validate, 1 worker ÷ bare node:http', m.bridge1, m.bare1, TARGET_BRIDGE_VS_BARE, vsBare.bridge1),
      ratioCheck('POST /auth/bridge/validate, 1 worker ÷ express hello', m.bridge1, hello, undefined, vsHello.bridge1),
      ratioCheck('express hello ÷ bare node:http, 1 worker', m.hello1, m.bare1, undefined, vsBare.hello1),
      ratioCheck('POST /auth/validation, 1 worker ÷ bare node:http', m.validationPost, m.bare1, undefined, vsBare.validationPost),
      equalLoadCheck(`GET /auth/validation, bare p99 ÷ its p99 at ${equalRate} req/s (p99 ≤ 2× bare)`, 'validation'),
      equalLoadCheck(`POST /auth/bridge/validate, bare p99 ÷ its p99 at ${equalRate} req/s`, 'bridge'),
      equalLoadCheck(`GET /auth/validation, limits on, bare p99 ÷ its p99 at ${equalRate} req/s`, 'validationLimited'),
      equalLoadCheck(`POST /auth/bridge/validate, limits on, bare p99 ÷ its p99 at ${equalRate} req/s`, 'bridgeLimited'),
      p99Check('GET /auth/validation, bare p99 ÷ its p99 flat out (≈ throughput ratio)', m.validation1, m.bare1),
      p99Check('POST /auth/bridge/validate, bare p99 ÷ its p99 flat out (≈ throughput ratio)', m.bridge1, m.bare1),
      twoWorkerCheck('GET /auth/validation, 2 workers ÷ 1 worker', m.validation2, m.validation1, cores, TARGET_TWO_WORKERS),
      twoWorkerCheck('POST /auth/bridge/validate, 2 workers ÷ 1 worker', m.bridge2, m.bridge1, cores, TARGET_TWO_WORKERS),
      ratioCheck('hello, 2 workers ÷ 1 worker (what this box allows)', m.hello2, m.hello1),
      ...[
        twoWorkerCeiling('hello, ceiling of 2 workers ÷ 1 on this box', m.hello1, cores),
        twoWorkerCeiling('GET /auth/validation, ceiling of 2 workers ÷ 1 on this box', m.validation1, cores),
        twoWorkerCeiling('POST /auth/bridge/validate, ceiling of 2 workers ÷ 1 on this box', m.bridge1, cores),
        cpuScaling('GET /auth/validation, server CPU/request with 2 workers ÷ with 1', m.validation2, m.validation1),
        cpuScaling('POST /auth/bridge/validate, server CPU/request with 2 workers ÷ with 1', m.bridge2, m.bridge1),
        cpuCheck('GET /auth/validation, CPU/request of hello ÷ its own', m.validation1, hello),
        cpuCheck('POST /auth/bridge/validate, CPU/request of hello ÷ its own', m.bridge1, hello),
        cpuCheck('GET /auth/validation, CPU/request of bare node:http ÷ its own', m.validation1, m.bare1),
        cpuCheck('POST /auth/bridge/validate, CPU/request of bare node:http ÷ its own', m.bridge1, m.bare1),
        cpuCheck('POST /auth/validation, CPU/request of bare node:http ÷ its own', m.validationPost, m.bare1),
      ].filter((c): c is Check => c !== null),
      // Limits on ÷ off: both servers run side by side and each round measures both (same-round ratios).
      { name: 'GET /auth/validation ÷ hello, 1 worker, limits on (Redis)', value: vsHello.validationLimited },
      { name: 'GET /auth/validation ÷ bare node:http, 1 worker, limits on (Redis)', value: vsBare.validationLimited },
      atLeast('GET /auth/validation, limits on ÷ off (same rounds)', limitsOnOff.validation, TARGET_LIMITS_ON_VS_OFF),
      { name: 'POST /auth/bridge/validate ÷ hello, 1 worker, limits on (Redis)', value: vsHello.bridgeLimited },
      { name: 'POST /auth/bridge/validate ÷ bare node:http, 1 worker, limits on (Redis)', value: vsBare.bridgeLimited },
      atLeast('POST /auth/bridge/validate, limits on ÷ off (same rounds)', limitsOnOff.bridge, TARGET_LIMITS_ON_VS_OFF),
      ...[
        cpuScaling('GET /auth/validation, server CPU/request with limits on ÷ off', m.validationLimited, m.validation1),
        cpuScaling('POST /auth/bridge/validate, server CPU/request with limits on ÷ off', m.bridgeLimited, m.bridge1),
      ].filter((c): c is Check => c !== null),
      atLeast('POST /auth/login, 1 worker ÷ measured bcrypt ceiling', one.login!.rps / measuredCeiling, TARGET_LOGIN_VS_BCRYPT),
      atLeast('POST /auth/login, 2 workers ÷ measured bcrypt ceiling', two.login!.rps / measuredCeiling, TARGET_LOGIN_VS_BCRYPT),
      { name: 'POST /auth/login, 1 worker ÷ bcrypt ceiling (cores ÷ hash time)', value: round(one.login!.rps / ceiling, 3) },
      { name: 'POST /auth/login, 2 workers ÷ bcrypt ceiling (cores ÷ hash time)', value: round(two.login!.rps / ceiling, 3) },
      ...refusalChecks(refusals),
    ];
    const pass = checks.every((c) => c.target === undefined || c.pass);

    out();
    out(renderTable(rows));
    out();
    out(`bcrypt cost ${prepared.bcryptRounds}: ${hashMs} ms per hash; ceiling ${ceiling} logins/s (${cores} cores ÷ hash time)`);
    out(`bcrypt with ${cores} hashes at once: ${measuredCeiling} hashes/s (the measured ceiling)`);
    out();
    out(renderChecks(checks));
    out();
    out(`${pass ? 'PASS' : 'FAIL'}: ${checks.filter((c) => c.pass === false).length} of ${checks.filter((c) => c.target !== undefined).length} targets missed`);

    const result = {
      date: new Date().toISOString(),
      runSeconds: round((Date.now() - started) / 1000, 1),
      machine: {
        cores,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        memoryGb: round(os.totalmem() / 2 ** 30, 1),
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
        loadavgBefore: loadBefore,
        loadavgAfter: os.loadavg().map((l) => round(l, 2)),
        loadGeneratorOnSameMachine: true,
      },
      setup: {
        durationSec: TIMING.durationSec,
        rounds: ROUNDS,
        loginDurationSec: LOGIN_SECONDS,
        warmupSec: TIMING.warmupSec,
        connections: CONNECTIONS,
        loginConnections: LOGIN_CONNECTIONS,
        loginUsers: LOGIN_USERS,
        database: backend.created ? 'postgres (fresh database, dropped after the run)' : 'postgres (BENCH_DATABASE_URL)',
        redis: 'redis (own key prefix, removed after the run)',
        initVia: prepared.initVia,
        initNote: prepared.initNote,
        serverNode: nodeVersion,
        loadNode: process.version,
        env: { RATE_LIMITS_ENABLED: 'false', LOG_LEVEL: 'info', NODE_ENV: 'production', FAST_LANE: process.env.FAST_LANE ?? 'true (default)' },
        limitsOnEnv: LIMITS_ON,
        refusalsEnv: { RATE_LIMITS_ENABLED: 'true', LOG_LEVEL: 'info', 'RATE_LIMIT_*': 'shipped defaults' },
      },
      bcrypt: { rounds: prepared.bcryptRounds, hashMs, cores, ceilingRps: ceiling, measuredCeilingRps: measuredCeiling },
      measurements: Object.fromEntries(
        rows.map((r) => [
          r.key,
          { route: r.label, workers: r.workers, ...r.m, vsHello: { ...ratios(r.m, r.workers === 1 ? m.hello1 : m.hello2), rpsSameRound: r.vsHello } },
        ]),
      ),
      rounds: {
        1: {
          hello: one.hello,
          bare: one.bare,
          validation: one.validation,
          validationPost: one.validationPost,
          bridge: one.bridge,
          validationLimitsOn: one.validationLimited,
          bridgeLimitsOn: one.bridgeLimited,
          atEqualLoad: one.atEqualLoad,
        },
        2: { hello: two.hello, bare: two.bare, validation: two.validation, bridge: two.bridge },
        refusals,
      },
      checks,
      pass,
    };
    writeResults(ROOT, RESULTS, result);
    return pass ? 0 : 1;
  } finally {
    await cleanup();
  }
}

runBenchmark('bench', main);
