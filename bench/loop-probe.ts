import { writeFileSync } from 'node:fs';
import { PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';

/**
 * Loaded into a server by `npm run bench:tail` (NODE_OPTIONS=--import …/loop-probe.js, never in
 * production): what held the server's event loop. Every garbage collection (start, length, kind) and
 * every stall of the loop, seen as a 1 ms interval timer that fired late by more than STALL_MS, with
 * the CPU the process used meanwhile (about the stall's length: the process was busy; about none: it
 * was not running, the machine gave the core to another). On SIGUSR2 it writes what it saw since the
 * last signal to BENCH_PROBE_FILE (times on the wall clock, ms since the epoch) and starts again.
 */

const STALL_MS = 2;

export interface ProbeRecord {
  /** [start, ms, kind]: kind 1 a scavenge, 2 a mark-compact, 4 incremental marking, 8 weak callbacks. */
  gcs: [number, number, number][];
  /** [start, ms, cpuMs]: the loop did not turn for `ms`; the process used `cpuMs` of CPU meanwhile. */
  stalls: [number, number, number][];
}

const file = process.env.BENCH_PROBE_FILE;
if (file) {
  let seen: ProbeRecord = { gcs: [], stalls: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      seen.gcs.push([performance.timeOrigin + e.startTime, e.duration, (e as PerformanceEntry & { detail: { kind: number } }).detail.kind]);
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    if (now - last > 1 + STALL_MS) {
      seen.stalls.push([performance.timeOrigin + last, now - last, (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000]);
    }
    last = now;
    lastCpu = cpu;
  }, 1).unref();
  process.on('SIGUSR2', () => {
    writeFileSync(file, JSON.stringify(seen));
    seen = { gcs: [], stalls: [] };
  });
}
