import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const lines = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8')
  .split('\n')
  .map((l) => l.trim());
const at = (re: RegExp) => lines.findIndex((l) => re.test(l));

describe('.ci/run', () => {
  it('when CI runs, then the quick tier runs on the machine’s node and the README’s npm test on the pinned Node 24, installed with its headers', () => {
    const quick = at(/^npm run test:quick$/);
    const node24First = at(/^export PATH="\$NODE24\/bin:\$PATH" npm_config_nodedir="\$NODE24"$/);
    const fullSuite = at(/^npm test$/);
    expect(quick).toBeGreaterThan(-1);
    expect(at(/^NODE24=\$\(node release\/node24\/runtime\.mjs\)/)).toBeGreaterThan(quick);
    expect(node24First).toBeGreaterThan(quick);
    expect(fullSuite).toBeGreaterThan(node24First);
    expect(lines.slice(node24First, fullSuite)).toContain('install_deps');
  });
});
