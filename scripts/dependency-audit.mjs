#!/usr/bin/env node
// The dependency policy's check (docs/security.md, "Dependencies"): `npm audit --omit=dev` over the
// runtime dependencies. A critical advisory fails the run; high, moderate and low are reported with the
// time the policy gives to fix them. Where the registry's audit endpoint does not answer (an offline host,
// a mirror without it), the check says it was skipped and why, and does not fail.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Days the policy gives to fix an advisory in a runtime dependency, by severity. */
export const FIX_WITHIN_DAYS = { critical: 0, high: 7, moderate: 30, low: 90 };

/**
 * What `npm audit --json` printed, as a verdict: `skipped` when the endpoint gave no report, else the
 * counts by severity and whether the run fails (any critical).
 * @param {string} stdout
 * @returns {{ skipped: string } | { counts: Record<string, number>; fail: boolean; lines: string[] }}
 */
export function auditVerdict(stdout) {
  let report;
  try {
    report = JSON.parse(stdout);
  } catch {
    return { skipped: 'npm audit printed no report' };
  }
  const counts = report?.metadata?.vulnerabilities;
  if (!counts || typeof counts !== 'object') return { skipped: report?.message || report?.error?.summary || 'the audit endpoint gave no report' };
  const lines = Object.entries(report.vulnerabilities ?? {}).map(([name, v]) => {
    const days = FIX_WITHIN_DAYS[v.severity];
    return `${name}: ${v.severity}${days === 0 ? ', fix before landing' : `, fix within ${days} days`}`;
  });
  return { counts, fail: (counts.critical ?? 0) > 0, lines };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const say = (line) => process.stderr.write(`[audit] ${line}\n`);
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const r = spawnSync(npm[0], [...npm.slice(1), 'audit', '--omit=dev', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 90_000 });
  const v = auditVerdict(r.stdout ?? '');
  if ('skipped' in v) {
    say(`dependency audit: SKIPPED, ${v.skipped} (the registry's audit endpoint did not answer)`);
    process.exit(0);
  }
  const c = v.counts;
  say(`dependency audit (runtime dependencies): ${c.critical ?? 0} critical, ${c.high ?? 0} high, ${c.moderate ?? 0} moderate, ${c.low ?? 0} low`);
  for (const line of v.lines) say(`  ${line}`);
  process.exit(v.fail ? 1 : 0);
}
