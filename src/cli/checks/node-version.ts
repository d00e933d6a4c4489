import { fail, ok, type Check } from './check.js';

/** Same floor as package.json "engines". */
export const MIN_NODE = '20.19.0';

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

export const nodeVersionCheck: Check = {
  id: 'node-version',
  title: 'Node.js version',
  category: 'system',
  withoutConfig: true,
  preflight: ['init', 'serve'],
  async run() {
    const v = process.versions.node;
    return versionAtLeast(v, MIN_NODE)
      ? ok(`${v}; needs >= ${MIN_NODE}`)
      : fail(`${v} is too old; Gatehouse needs >= ${MIN_NODE}`, 'install a newer Node.js (https://nodejs.org or NodeSource)');
  },
};
