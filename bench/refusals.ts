import { note } from './harness.js';
import { combine, measure, round, roundRatio, type LoadSpec, type LoadTiming, type Measurement } from './load.js';
import { BENCH_BRIDGE_SECRET, type Prepared } from './prepare.js';
import type { ChildServer } from './processes.js';
import { bridgeSpec, login, startGatehouse } from './servers.js';
import type { Check, Row } from './report.js';

/**
 * Refusals against accepted validations, with the shipped defaults (issue 52): one Gatehouse with rate
 * limits on at their shipped figures and LOG_LEVEL=info, nothing raised. A client past its budget is
 * refused over and over; that must not cost more than the work it stands in for, so each round measures
 * accepted bridge validations (the right secret: `bridge`, 10,000,000 per 5 minutes, which the run does
 * not reach) and, on the same server seconds apart, three floods that are refused:
 *
 * - GET /auth/validation without a session: `default`, per address (300 per 5 minutes);
 * - POST /auth/bridge/validate with a wrong secret: `bridge-invalid`, per address (10 per 15 minutes);
 * - GET /auth/validation with one live session: `session`, per session (600 per 5 minutes).
 *
 * All three are refused by the fast lane (src/http/fast-lane), before Express. A flood the lane cannot
 * classify from headers alone (a made-up session token, any other route) is refused by the gate in
 * Express, at what an Express request costs: not measured here.
 *
 * The warm-up before the first round spends those budgets; every answer measured in a flood is a 429
 * (anything else fails its check). Ratio: refusals ÷ accepted validations per second, same rounds, ≥ 0.5.
 * Used by `npm run bench` (bench/run.ts) and alone by `npm run bench:refusals` (bench/refusals-run.ts).
 */

export const TARGET_REFUSALS_VS_ACCEPTED = 0.5;

export const REFUSAL_KEYS = ['accepted', 'refusedDefault', 'refusedGuess', 'refusedSession'] as const;
export type RefusalKey = (typeof REFUSAL_KEYS)[number];

export const REFUSAL_LABELS: Record<RefusalKey, string> = {
  accepted: 'POST /auth/bridge/validate, shipped limits (accepted)',
  refusedDefault: 'GET /auth/validation, no session, past default (429)',
  refusedGuess: 'POST /auth/bridge/validate, wrong secret, past bridge-invalid (429)',
  refusedSession: 'GET /auth/validation, one session past session (429)',
};

export type RefusalPhase = Record<RefusalKey, Measurement[]>;

/** The run's environment with no figure of its own: limits on, every budget at its shipped default, the default log level. */
function shipped(p: Prepared): Prepared {
  const env = Object.fromEntries(Object.entries(p.env).filter(([k]) => !k.startsWith('RATE_LIMIT')));
  return {
    ...p,
    env: {
      ...env,
      RATE_LIMITS_ENABLED: 'true',
      LOG_LEVEL: 'info',
      // Budgets of their own: what other servers of the run counted does not reach these windows.
      REDIS_PREFIX: `${p.env.REDIS_PREFIX ?? 'ghbench:'}refusals:`,
    },
  };
}

/** Measures the floods and the accepted validations on one shipped-defaults server, `rounds` times each. */
export async function measureRefusals(p: Prepared, opts: { rounds: number; timing: LoadTiming; connections: number }): Promise<RefusalPhase> {
  const server: ChildServer = await startGatehouse(shipped(p), 1);
  try {
    const accepted = await login(server.url, p.emails[0]);
    const flooded = await login(server.url, p.emails[1]);
    const ok = await fetch(`${server.url}/auth/bridge/validate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Bridge-Secret': BENCH_BRIDGE_SECRET, 'X-Session-ID': accepted },
      body: '{}',
    });
    if (ok.status !== 200) throw new Error(`bridge validation with the shipped limits answered ${ok.status}: ${await ok.text()}`);
    const c = opts.connections;
    const specs: Record<RefusalKey, LoadSpec> = {
      accepted: bridgeSpec(server.url, accepted, c),
      refusedDefault: { url: `${server.url}/auth/validation`, connections: c, status: 429 },
      refusedGuess: {
        url: `${server.url}/auth/bridge/validate`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Bridge-Secret': 'not-the-bench-secret-0000000000', 'X-Session-ID': accepted },
        body: '{}',
        connections: c,
        status: 429,
      },
      refusedSession: { url: `${server.url}/auth/validation`, headers: { 'X-Session-ID': flooded }, connections: c, status: 429 },
    };
    const out = Object.fromEntries(REFUSAL_KEYS.map((k) => [k, [] as Measurement[]])) as RefusalPhase;
    for (let r = 0; r < opts.rounds; r++) {
      for (const key of REFUSAL_KEYS) {
        note(`${key} (shipped limits, LOG_LEVEL=info), round ${r + 1} of ${opts.rounds}`);
        const timing = { durationSec: opts.timing.durationSec, warmupSec: r === 0 ? opts.timing.warmupSec : 0 };
        out[key].push(await measure(`${key}-1w`, specs[key], timing, server.cpuMs));
      }
    }
    return out;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- server output ---\n${server.output()}`);
  } finally {
    await server.stop();
  }
}

/** Every answer of a flood was a 429, and the accepted ones all 2xx, with no error or timeout. */
const allRefused = (m: Measurement) => m.errors + m.timeouts === 0 && Object.keys(m.statuses).every((s) => s === '429') && m.requests > 0;
const allAccepted = (m: Measurement) => m.errors + m.timeouts === 0 && m.non2xx === 0 && m.requests > 0;

/** The table's rows (÷ hello left empty: these are compared with the accepted validations, in the checks). */
export function refusalRows(phase: RefusalPhase): (Row & { vsHello: number | null })[] {
  return REFUSAL_KEYS.map((k) => ({ key: `refusals-${k}`, label: REFUSAL_LABELS[k], workers: 1, m: combine(phase[k]), vsHello: null }));
}

/** Refusals ÷ accepted validations per second, same rounds, each against the target; CPU per request for information. */
export function refusalChecks(phase: RefusalPhase): Check[] {
  const accepted = combine(phase.accepted);
  const checks: Check[] = [];
  for (const k of REFUSAL_KEYS.filter((x) => x !== 'accepted')) {
    const m = combine(phase[k]);
    const value = roundRatio(phase[k], phase.accepted);
    const clean = allRefused(m) && allAccepted(accepted);
    const notes = [`${m.rps} vs ${accepted.rps} req/s`];
    if (!allRefused(m)) notes.push(`answers were not all 429: ${JSON.stringify(m.statuses)}`);
    if (!allAccepted(accepted)) notes.push(`accepted validations were not all 2xx: ${JSON.stringify(accepted.statuses)}`);
    checks.push({
      name: `${REFUSAL_LABELS[k].replace(/ \(429\)$/, '')}: refusals ÷ accepted validations, shipped limits, LOG_LEVEL=info`,
      value,
      target: TARGET_REFUSALS_VS_ACCEPTED,
      pass: clean && value >= TARGET_REFUSALS_VS_ACCEPTED,
      note: notes.join('; '),
    });
    if (m.cpuUsPerReq && accepted.cpuUsPerReq) {
      checks.push({
        name: `${REFUSAL_LABELS[k].replace(/ \(429\)$/, '')}: server CPU/request of an accepted validation ÷ of a refusal`,
        value: round(accepted.cpuUsPerReq / m.cpuUsPerReq, 3),
        note: `${accepted.cpuUsPerReq} vs ${m.cpuUsPerReq} µs`,
      });
    }
  }
  return checks;
}
