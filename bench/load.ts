import autocannon, { type Options, type Result } from 'autocannon';

export interface Measurement {
  name: string;
  /** Successful (2xx) responses per second over the measured window (with LoadSpec.status: answers of that status). */
  rps: number;
  /** Latency percentiles of the 2xx answers (with LoadSpec.status: of that status), ms, to the hundredth (timed per answer, not autocannon's whole-ms histogram). */
  p50: number;
  p99: number;
  /** Mean latency, ms. */
  mean: number;
  requests: number;
  non2xx: number;
  /** Responses per status code. */
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  connections: number;
  durationSec: number;
  /** Server CPU time (all its processes) per completed request, µs; null when unknown. */
  cpuUsPerReq: number | null;
  /** The load generator's own CPU time (this process) per completed request, µs. */
  clientCpuUsPerReq: number | null;
}

export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /**
   * Bodies handed out round-robin across all connections, so concurrent requests carry different
   * bodies (logins of different accounts: the per-account backoff holds a slot per attempt in flight).
   */
  bodies?: string[];
  connections: number;
  /**
   * The answer being measured, when it is not a 2xx (a refusal: 429): rps and latencies count the
   * answers of this status instead. `non2xx` and `statuses` still report every answer.
   */
  status?: number;
}

export interface LoadTiming {
  warmupSec: number;
  durationSec: number;
  /** A pause between the warm-up and the measured run, for work the warm-up left running on the server. */
  settleSec?: number;
}

/**
 * A warm-up run (discarded: fills caches, JIT, connection pools), then the measured run.
 * `serverCpuMs` reads the server's CPU time, sampled around the measured run only.
 */
export async function measure(name: string, spec: LoadSpec, timing: LoadTiming, serverCpuMs: () => number | null = () => null): Promise<Measurement> {
  const base: Options = {
    url: spec.url,
    method: spec.method ?? 'GET',
    headers: spec.headers,
    body: spec.body,
    requests: spec.bodies ? [{ setupRequest: roundRobin(spec.bodies) }] : undefined,
    connections: spec.connections,
    pipelining: 1,
    timeout: 30,
  };
  if (timing.warmupSec > 0) await autocannon({ ...base, duration: timing.warmupSec });
  if (timing.settleSec) await new Promise((r) => setTimeout(r, timing.settleSec! * 1000));
  const cpuBefore = serverCpuMs();
  const clientBefore = process.cpuUsage();
  const run = autocannon({ ...base, duration: timing.durationSec, title: name });
  const latencies = new Latencies();
  const want = spec.status;
  run.on('response', (_client, status, _bytes, ms) => (want === undefined ? status >= 200 && status < 300 : status === want) && latencies.add(ms));
  const r: Result = await run;
  const client = process.cpuUsage(clientBefore);
  const cpuAfter = serverCpuMs();
  const seconds = r.duration || timing.durationSec;
  const counted = want === undefined ? r['2xx'] : (r.statusCodeStats?.[String(want)]?.count ?? 0);
  return {
    name,
    rps: round(counted / seconds, 1),
    p50: latencies.percentile(50),
    p99: latencies.percentile(99),
    mean: round(r.latency.mean, 2),
    requests: r.requests.total,
    non2xx: r.non2xx,
    statuses: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => [code, v.count])),
    errors: r.errors,
    timeouts: r.timeouts,
    connections: spec.connections,
    durationSec: round(seconds, 2),
    cpuUsPerReq: cpuBefore !== null && cpuAfter !== null && r.requests.total > 0 ? round(((cpuAfter - cpuBefore) * 1000) / r.requests.total, 1) : null,
    clientCpuUsPerReq: r.requests.total > 0 ? round((client.user + client.system) / r.requests.total, 1) : null,
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const medianOrNull = (xs: (number | null)[]): number | null => (xs.some((x) => x === null) ? null : round(median(xs as number[]), 1));

/** Several rounds of one measurement as one: medians of the rates, latencies and CPU; sums of the counts. */
export function combine(rounds: Measurement[]): Measurement {
  const [first] = rounds;
  const statuses: Record<string, number> = {};
  for (const m of rounds) for (const [code, n] of Object.entries(m.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  const sum = (f: (m: Measurement) => number) => rounds.reduce((acc, m) => acc + f(m), 0);
  return {
    name: first.name,
    rps: round(median(rounds.map((m) => m.rps)), 1),
    p50: median(rounds.map((m) => m.p50)),
    p99: median(rounds.map((m) => m.p99)),
    mean: round(median(rounds.map((m) => m.mean)), 2),
    requests: sum((m) => m.requests),
    non2xx: sum((m) => m.non2xx),
    statuses,
    errors: sum((m) => m.errors),
    timeouts: sum((m) => m.timeouts),
    connections: first.connections,
    durationSec: round(
      sum((m) => m.durationSec),
      2,
    ),
    cpuUsPerReq: medianOrNull(rounds.map((m) => m.cpuUsPerReq)),
    clientCpuUsPerReq: medianOrNull(rounds.map((m) => m.clientCpuUsPerReq)),
  };
}

/** The median over rounds of num ÷ den measured in the same round: drift of the machine cancels out. */
export const roundRatio = (nums: Measurement[], dens: Measurement[]): number =>
  round(median(nums.map((m, i) => (dens[i].rps > 0 ? m.rps / dens[i].rps : 0))), 3);

/** Every answer's latency (ms), kept to compute percentiles at full resolution. */
class Latencies {
  private values = new Float64Array(1 << 16);
  private n = 0;
  add(ms: number): void {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.n++] = ms;
  }
  percentile(p: number): number {
    if (this.n === 0) return 0;
    const sorted = this.values.subarray(0, this.n).sort();
    return round(sorted[Math.min(this.n - 1, Math.ceil((p / 100) * this.n) - 1)], 2);
  }
}

function roundRobin(bodies: string[]) {
  let next = 0;
  return (req: Record<string, unknown>) => ({ ...req, body: bodies[next++ % bodies.length] });
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
