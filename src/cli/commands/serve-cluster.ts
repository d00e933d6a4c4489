import type { Cluster, Worker } from 'node:cluster';
import type { Ui } from '../ui.js';

/** The message a worker sends its primary once it listens. */
export const WORKER_LISTENING = 'gatehouse:listening';

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Resolves on the first SIGTERM or SIGINT (or, in a worker, when the primary is gone). Later signals
 * are swallowed: shutdown is already under way and bounded by its grace period.
 */
export function waitForStop(opts: { orPrimaryGone?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (why: string) => {
      if (!done) {
        done = true;
        resolve(why);
      }
    };
    for (const s of STOP_SIGNALS) process.on(s, () => finish(s));
    if (opts.orPrimaryGone) process.on('disconnect', () => finish('primary gone'));
  });
}

export interface SuperviseOptions {
  workers: number;
  ui: Ui;
  /** Workers get this long to finish in-flight requests before they are killed. */
  graceMs: number;
  /** This many unexpected exits within crashWindowMs is a crash loop: give up. */
  maxCrashes?: number;
  crashWindowMs?: number;
  /** Restart delay: base × 2^(recent crashes − 1), capped. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Forks the workers, restarts one that dies (with backoff), gives up on a crash loop, and on
 * SIGTERM/SIGINT stops them all gracefully. Resolves with the exit code once every worker is gone.
 */
export function supervise(cluster: Cluster, opts: SuperviseOptions): Promise<number> {
  const { ui } = opts;
  const maxCrashes = opts.maxCrashes ?? 5;
  const windowMs = opts.crashWindowMs ?? 60_000;
  const baseDelay = opts.baseDelayMs ?? 500;
  const maxDelay = opts.maxDelayMs ?? 10_000;

  return new Promise((resolve) => {
    const live = new Set<Worker>();
    const restarts = new Set<NodeJS.Timeout>();
    const crashes: number[] = [];
    let stopping = false;
    let announced = false;
    let exitCode = 0;
    let killTimer: NodeJS.Timeout | undefined;

    const fork = () => {
      const worker = cluster.fork();
      live.add(worker);
      worker.on('message', (m: { type?: string; url?: string; pid?: number }) => {
        if (m?.type !== WORKER_LISTENING) return;
        if (!announced) {
          announced = true;
          ui.print(`Gatehouse listening on ${m.url} (${opts.workers} workers)`);
        }
        ui.note(`worker ${m.pid} listening`);
      });
    };

    const finish = () => {
      clearTimeout(killTimer);
      for (const s of STOP_SIGNALS) process.off(s, onSignal);
      cluster.off('exit', onExit);
      resolve(exitCode);
    };

    const stop = () => {
      if (stopping) return;
      stopping = true;
      for (const t of restarts) clearTimeout(t);
      if (!live.size) return finish();
      for (const w of live) w.process.kill('SIGTERM');
      killTimer = setTimeout(() => {
        for (const w of live) w.process.kill('SIGKILL');
      }, opts.graceMs + 4_000);
    };

    function onSignal(signal: NodeJS.Signals) {
      if (!stopping) ui.note(`${signal}: stopping ${live.size} workers`);
      stop();
    }

    function onExit(worker: Worker, code: number | null, signal: string | null) {
      live.delete(worker);
      if (stopping) {
        if (!live.size) finish();
        return;
      }
      const now = Date.now();
      crashes.push(now);
      while (crashes[0] < now - windowMs) crashes.shift();
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (crashes.length >= maxCrashes) {
        ui.note(`worker ${worker.process.pid} exited (${how})`);
        ui.note(`error: workers exited ${crashes.length} times within ${windowMs / 1000}s; giving up`);
        exitCode = 1;
        stop();
        return;
      }
      const delay = Math.min(maxDelay, baseDelay * 2 ** (crashes.length - 1));
      ui.note(`worker ${worker.process.pid} exited (${how}); starting a new one in ${delay} ms`);
      const timer = setTimeout(() => {
        restarts.delete(timer);
        if (!stopping) fork();
      }, delay);
      restarts.add(timer);
    }

    for (const s of STOP_SIGNALS) process.on(s, onSignal);
    cluster.on('exit', onExit);
    for (let i = 0; i < opts.workers; i++) fork();
  });
}
