import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDirs, ROOT, tempDir } from '../helpers/cli.js';

/*
 * The README's test command on a fresh clone: `npm test` (and `npm run test:quick`) first install the
 * dependencies when node_modules is missing or does not match package-lock.json. The clone is this
 * working tree as `git clone` gives it, with uncommitted changes laid over; --dry-run shows the plan.
 */

let clone: string;

/** npm's variables from the run that started vitest would point npm at this checkout instead of the clone. */
const env = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

function npm(args: string[]) {
  const r = spawnSync('npm', args, { cwd: clone, env: env(), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const steps = (out: string) => [...out.matchAll(/^\[test\] would run: (.*)$/gm)].map((m) => m[1]);

beforeAll(() => {
  clone = path.join(tempDir('gh-clone-'), 'gatehouse');
  execFileSync('git', ['clone', '--quiet', ROOT, clone]);
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
  for (const f of git('ls-files', '-z', '--modified', '--others', '--exclude-standard')) {
    if (!existsSync(path.join(ROOT, f))) continue;
    mkdirSync(path.dirname(path.join(clone, f)), { recursive: true });
    copyFileSync(path.join(ROOT, f), path.join(clone, f));
  }
  for (const f of git('ls-files', '-z', '--deleted')) rmSync(path.join(clone, f), { force: true });
}, 120_000);
afterAll(removeTempDirs);

/** Gives the clone a node_modules whose install record is this checkout's, changed by `edit`. */
function installRecord(edit: (packages: Record<string, { version: string }>) => void = () => {}) {
  const record = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '.package-lock.json'), 'utf8'));
  edit(record.packages);
  rmSync(path.join(clone, 'node_modules'), { recursive: true, force: true });
  mkdirSync(path.join(clone, 'node_modules'));
  writeFileSync(path.join(clone, 'node_modules', '.package-lock.json'), JSON.stringify(record));
}

describe('npm test on a fresh clone', () => {
  it('when node_modules is missing, then npm test installs with npm ci before it builds, lints and runs every tier', () => {
    rmSync(path.join(clone, 'node_modules'), { recursive: true, force: true });
    const r = npm(['test', '--', '--dry-run']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('node_modules is missing: installing the dependencies first');
    expect(steps(r.out)).toEqual([
      'npm ci',
      'npm run build',
      'npm run lint',
      'npm run format:check',
      'node scripts/dependency-audit.mjs',
      'node release/node24/runtime.mjs',
      'vitest run',
    ]);
  });

  it('when node_modules holds an older install than package-lock.json, then it is reinstalled', () => {
    installRecord((p) => (p['node_modules/zod']!.version = '3.0.0'));
    const r = npm(['test', '--', '--dry-run']);
    expect(r.out).toMatch(/zod is 3\.0\.0, package-lock\.json wants 4\.\d+\.\d+: installing the dependencies first/);
    expect(steps(r.out)[0]).toBe('npm ci');
  });

  it('when an install stopped half-way (no install record), then it is reinstalled', () => {
    rmSync(path.join(clone, 'node_modules'), { recursive: true, force: true });
    mkdirSync(path.join(clone, 'node_modules', 'zod'), { recursive: true });
    const r = npm(['test', '--', '--dry-run']);
    expect(r.out).toContain('node_modules holds no finished install');
    expect(steps(r.out)[0]).toBe('npm ci');
  });

  it('when node_modules matches package-lock.json, then nothing is installed', () => {
    installRecord();
    const r = npm(['test', '--', '--dry-run']);
    expect(r.out).toContain('node_modules matches package-lock.json');
    expect(steps(r.out)).toEqual([
      'npm run build',
      'npm run lint',
      'npm run format:check',
      'node scripts/dependency-audit.mjs',
      'node release/node24/runtime.mjs',
      'vitest run',
    ]);
  });

  it('when the quick tier runs on a fresh clone, then it installs, builds, and runs the unit tier and the smoke run only', () => {
    rmSync(path.join(clone, 'node_modules'), { recursive: true, force: true });
    const r = npm(['run', 'test:quick', '--', '--dry-run']);
    expect(r.code, r.out).toBe(0);
    expect(steps(r.out)).toEqual(['npm ci', 'npm run build', 'vitest run --project unit --project smoke']);
  });
});
