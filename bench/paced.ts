import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { round, type LoadSpec, type Measurement } from './load.js';

/** When each answer at or above the window's p99 was issued (wall clock, ms since the epoch) and how long it took (ms). */
export type SlowAnswer = [issuedAtEpochMs: number, ms: number];

/** With keepSlow: when the measured window opened (ms since the epoch) and its answers at or above p99. */
export type PacedMeasurement = Measurement & { windowStart?: number; slow?: SlowAnswer[] };

export interface PacedTiming {
  warmupSec: number;
  durationSec: number;
  /** Also return the answers at or above p99 (bench/tail.ts lines them up with the server's stalls). */
  keepSlow?: boolean;
}

/**
 * Latency at a fixed offered load (open loop): requests are issued at an even pace, `rate` a second
 * (those due are issued together on a millisecond timer), whatever the answers do, and each one's
 * latency runs from when it was issued, not from when a connection was free to send it (so a stall is
 * charged to every request it delays, as wrk2 does). autocannon's `overallRate` cannot do this: it
 * lets each connection send its quota for the second as fast as it can, then waits for the next
 * second, so its "fixed rate" is bursts flat out.
 *
 * HTTP/1.1 keep-alive over `spec.connections` sockets, one request in flight on each; a request due
 * while all are busy waits in line here. Answers must carry Content-Length (every route measured does).
 */
export async function paced(name: string, spec: LoadSpec, rate: number, timing: PacedTiming, serverCpuMs: () => number | null): Promise<PacedMeasurement> {
  // In a process of its own: the harness's heap, grown by every autocannon run before, had a
  // mark-compact every half second here (pauses up to 20 ms, charged to whatever was being measured).
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_PACED_CHILD: '1' } });
  let cpuBefore: number | null = null;
  try {
    return await new Promise<PacedMeasurement>((resolve, reject) => {
      child.on('message', (m: { measuring?: true; result?: PacedMeasurement; error?: string }) => {
        if (m.measuring) cpuBefore = serverCpuMs();
        if (m.error) reject(new Error(`paced load for ${name}: ${m.error}`));
        if (!m.result) return;
        const cpuAfter = serverCpuMs();
        const r = m.result;
        const cpuUsPerReq = cpuBefore !== null && cpuAfter !== null && r.requests > 0 ? round(((cpuAfter - cpuBefore) * 1000) / r.requests, 1) : null;
        resolve({ ...r, name, cpuUsPerReq });
      });
      child.once('exit', (code) => reject(new Error(`paced load for ${name}: the load process exited (${code})`)));
      child.send({ spec, rate, timing });
    });
  } finally {
    child.kill();
  }
}

/**
 * The load itself (in the child): the connections are opened once, then a warm-up at the rate
 * (discarded) and the measured window run on them, so the window times answers on warm connections
 * (opening 50 at its start had put every connection's first answer, and a burst of accepts, in it).
 */
async function run(spec: LoadSpec, rate: number, timing: PacedTiming, measuring: () => void): Promise<PacedMeasurement> {
  const load = await connect(spec);
  try {
    if (timing.warmupSec > 0) await load.window(rate, timing.warmupSec, () => undefined);
    return await load.window(rate, timing.durationSec, measuring, timing.keepSlow);
  } finally {
    load.close();
  }
}

/** What one window saw. */
interface Tally {
  latencies: number[];
  /** When each 2xx answer in `latencies` was issued (performance.now()). */
  issued: number[];
  statuses: Record<string, number>;
  errors: number;
  answered: number;
}

async function connect(
  spec: LoadSpec,
): Promise<{ window: (rate: number, durationSec: number, measuring: () => void, keepSlow?: boolean) => Promise<PacedMeasurement>; close(): void }> {
  const url = new URL(spec.url);
  const body = spec.body ?? '';
  const head = [
    `${spec.method ?? 'GET'} ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    ...Object.entries(spec.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    ...(spec.method === 'POST' ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
  ];
  const request = Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);

  interface Conn {
    socket: net.Socket;
    issuedAt: number;
    buf: Buffer;
  }

  let tally: Tally = { latencies: [], issued: [], statuses: {}, errors: 0, answered: 0 };
  const waiting: number[] = [];
  const free: Conn[] = [];

  const dispatch = () => {
    while (waiting.length > 0 && free.length > 0) {
      const c = free.pop()!;
      c.issuedAt = waiting.shift()!;
      c.socket.write(request);
    }
  };

  const open = () =>
    new Promise<Conn>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname);
      socket.setNoDelay(true);
      const c: Conn = { socket, issuedAt: 0, buf: Buffer.alloc(0) };
      socket.once('connect', () => resolve(c));
      socket.once('error', (err) => {
        tally.errors += 1;
        reject(err);
      });
      socket.on('data', (chunk: Buffer) => {
        c.buf = c.buf.length === 0 ? chunk : Buffer.concat([c.buf, chunk]);
        const end = c.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const header = c.buf.toString('latin1', 0, end);
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(header);
        if (!length) {
          tally.errors += 1;
          return void socket.destroy();
        }
        if (c.buf.length < end + 4 + Number(length[1])) return;
        c.buf = c.buf.subarray(end + 4 + Number(length[1]));
        const status = header.slice(9, 12);
        tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
        tally.answered += 1;
        if (status[0] === '2') {
          tally.latencies.push(performance.now() - c.issuedAt);
          tally.issued.push(c.issuedAt);
        }
        free.push(c);
        dispatch();
      });
    });

  const conns = await Promise.all(Array.from({ length: spec.connections }, open));
  free.push(...conns);

  /** `rate` requests a second for `durationSec`, then their answers for as long as a second. */
  async function window(rate: number, durationSec: number, measuring: () => void, keepSlow = false): Promise<PacedMeasurement> {
    const t: Tally = (tally = { latencies: [], issued: [], statuses: {}, errors: 0, answered: 0 });
    const intervalMs = 1000 / rate;
    let due = 0;
    measuring();
    const clientBefore = process.cpuUsage();
    const t0 = performance.now();
    const total = Math.round(rate * durationSec);
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now();
        // Issued now: the lag of this timer is the load generator's, not the server's; the wait for a
        // free connection that may follow is the server's, and is counted.
        while (due < total && t0 + due * intervalMs <= now) {
          waiting.push(now);
          due += 1;
        }
        dispatch();
        if (due < total) setTimeout(tick, 1);
        else resolve();
      };
      tick();
    });
    // The last requests' answers, for as long as a second.
    const deadline = performance.now() + 1000;
    while ((waiting.length > 0 || free.length < conns.length) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const seconds = (performance.now() - t0) / 1000;
    const client = process.cpuUsage(clientBefore);
    // Requests still unanswered belong to this window: the next one must not time them.
    waiting.length = 0;

    const sorted = Float64Array.from(t.latencies).sort();
    const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0);
    const pct = (p: number) => round(at(p), 2);
    const ok = t.latencies.length;
    return {
      name: '',
      rps: round(ok / seconds, 1),
      p50: pct(50),
      p99: pct(99),
      mean: ok ? round(t.latencies.reduce((a, b) => a + b, 0) / ok, 2) : 0,
      requests: t.answered,
      non2xx: t.answered - ok,
      statuses: t.statuses,
      errors: t.errors,
      timeouts: total - t.answered,
      connections: spec.connections,
      durationSec: round(seconds, 2),
      cpuUsPerReq: null, // read by the parent around the window
      clientCpuUsPerReq: t.answered > 0 ? round((client.user + client.system) / t.answered, 1) : null,
      ...(keepSlow
        ? {
            windowStart: performance.timeOrigin + t0,
            slow: slowAnswers(t, at(99)),
          }
        : {}),
    };
  }

  return {
    window,
    close: () => {
      for (const c of conns) c.socket.destroy();
    },
  };
}

/** The answers at or above `p99`, on the wall clock (performance.now() is this process's own). */
function slowAnswers(t: Tally, p99: number): SlowAnswer[] {
  const slow: SlowAnswer[] = [];
  for (let i = 0; i < t.latencies.length; i++) if (t.latencies[i] >= p99) slow.push([performance.timeOrigin + t.issued[i], round(t.latencies[i], 2)]);
  return slow;
}

if (process.env.BENCH_PACED_CHILD === '1' && process.send) {
  process.once('message', (m: { spec: LoadSpec; rate: number; timing: PacedTiming }) => {
    run(m.spec, m.rate, m.timing, () => process.send!({ measuring: true })).then(
      (result) => process.send!({ result }, () => process.exit(0)),
      (err: unknown) => process.send!({ error: String(err) }, () => process.exit(1)),
    );
  });
}
