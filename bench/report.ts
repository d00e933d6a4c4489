import type { Measurement } from './load.js';
import { round } from './load.js';

export interface Check {
  name: string;
  value: number;
  /** Absent: reported for information, no target. */
  target?: number;
  pass?: boolean;
  note?: string;
}

export interface Row {
  key: string;
  label: string;
  workers: number;
  m: Measurement;
}

const pad = (s: string, n: number, right = false) => (right ? s.padStart(n) : s.padEnd(n));

/**
 * The measurements as a fixed-width table. `÷ hello` is the median over rounds of the route's req/s
 * divided by hello's with the same workers in the same round; server and client CPU are µs per request.
 */
export function renderTable(rows: (Row & { vsHello: number | null })[]): string {
  const head = ['measurement', 'workers', 'conns', 'req/s', 'p50 ms', 'p99 ms', '÷ hello', 'server CPU', 'client CPU', 'non-2xx', 'errors'];
  const body = rows.map((r) => [
    r.label,
    String(r.workers),
    String(r.m.connections),
    r.m.rps.toFixed(1),
    String(r.m.p50),
    String(r.m.p99),
    r.vsHello === null ? '-' : r.vsHello.toFixed(3),
    r.m.cpuUsPerReq === null ? '-' : r.m.cpuUsPerReq.toFixed(0),
    r.m.clientCpuUsPerReq === null ? '-' : r.m.clientCpuUsPerReq.toFixed(0),
    String(r.m.non2xx),
    String(r.m.errors + r.m.timeouts),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i], i > 0)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export function renderChecks(checks: Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks
    .map((c) => {
      const verdict = c.target === undefined ? 'INFO' : c.pass ? 'PASS' : 'FAIL';
      const target = c.target === undefined ? '' : ` (target ≥ ${c.target})`;
      return `${verdict.padEnd(4)}  ${c.name.padEnd(width)}  ${c.value.toFixed(3)}${target}${c.note ? `  ${c.note}` : ''}`;
    })
    .join('\n');
}

/**
 * A ratio check; a run whose responses were not all 2xx fails whatever its speed. `value` overrides
 * num.rps ÷ den.rps (e.g. a median of per-round ratios).
 */
export function ratioCheck(name: string, num: Measurement, den: Measurement, target?: number, value = den.rps > 0 ? round(num.rps / den.rps, 3) : 0): Check {
  const clean = [num, den].every((m) => m.non2xx === 0 && m.errors === 0 && m.timeouts === 0);
  if (target === undefined) return { name, value };
  return {
    name,
    value,
    target,
    pass: clean && value >= target,
    ...(clean ? {} : { note: 'responses were not all 2xx' }),
  };
}

/**
 * hello's server CPU per request ÷ this route's: the throughput ratio a dedicated core would give,
 * and far less sensitive to other work on the machine than req/s.
 */
export function cpuCheck(name: string, route: Measurement, hello: Measurement): Check | null {
  if (!route.cpuUsPerReq || !hello.cpuUsPerReq) return null;
  return { name, value: round(hello.cpuUsPerReq / route.cpuUsPerReq, 3), note: `${hello.cpuUsPerReq} vs ${route.cpuUsPerReq} µs of server CPU per request` };
}

/**
 * What two workers can give at most on this machine when the load generator runs on it too: the
 * cores are shared by the workers (s µs of CPU per request) and the generator (a µs per request), so
 * 2 workers reach at most cores ÷ (s + a) requests per µs against one worker's 1 ÷ s; never more than 2.
 */
export function twoWorkerCeiling(name: string, one: Measurement, cores: number): Check | null {
  const s = one.cpuUsPerReq;
  const a = one.clientCpuUsPerReq;
  if (!s || !a) return null;
  return { name, value: round(Math.min(2, (cores * s) / (s + a)), 3), note: `${cores} cores, server ${s} µs + load generator ${a} µs per request` };
}

/**
 * Two workers ÷ one against `target`, or against 90 % of what this box allows (twoWorkerCeiling) when
 * that is lower: on a box with too few cores for the target, the target cannot be measured, and what
 * can be is whether the workers reach what the box leaves them.
 */
export function twoWorkerCheck(name: string, two: Measurement, one: Measurement, cores: number, target: number): Check {
  const ceiling = twoWorkerCeiling(name, one, cores)?.value;
  const reachable = ceiling === undefined ? target : Math.min(target, round(0.9 * ceiling, 3));
  const check = ratioCheck(name, two, one, reachable);
  if (reachable === target) return check;
  return { ...check, note: [check.note, `${target} is above this box's ceiling of ${ceiling}: target is 90 % of it`].filter(Boolean).join('; ') };
}

/**
 * Server CPU per request with two workers ÷ with one: about 1 when the workers do not get in each
 * other's way (no shared lock, no round trip on the hot path), whatever cores the machine has.
 */
export function cpuScaling(name: string, two: Measurement, one: Measurement): Check | null {
  if (!two.cpuUsPerReq || !one.cpuUsPerReq) return null;
  return { name, value: round(two.cpuUsPerReq / one.cpuUsPerReq, 3), note: `${two.cpuUsPerReq} vs ${one.cpuUsPerReq} µs of server CPU per request` };
}
