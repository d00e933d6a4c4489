#!/usr/bin/env node
// The README's test commands. `npm test`: install when node_modules is missing or does not match
// package-lock.json, build, lint, check formatting, run every tier. `npm run test:quick`: install
// when needed, build, then the unit tier and a smoke run of the real server (under 2 minutes).
// --dry-run says what it would run (and why it would install) without running it; any other
// argument goes to vitest (`npm test -- test/unit/config.test.ts`).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const dryRun = args.includes('--dry-run');
const vitestArgs = args.filter((a) => a !== '--quick' && a !== '--dry-run');

/**
 * Why node_modules needs an install, or null when it matches package-lock.json. npm records what it
 * installed in node_modules/.package-lock.json; a package the lock names with another version (or not
 * at all) means a stale tree. Optional packages for other platforms are absent by design.
 */
export function staleReason(root) {
  const lockFile = path.join(root, 'package-lock.json');
  const hiddenFile = path.join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(path.join(root, 'node_modules'))) return 'node_modules is missing';
  if (!existsSync(lockFile)) return 'there is no package-lock.json';
  if (!existsSync(hiddenFile)) return 'node_modules holds no finished install (no node_modules/.package-lock.json)';
  const wanted = JSON.parse(readFileSync(lockFile, 'utf8')).packages ?? {};
  const installed = JSON.parse(readFileSync(hiddenFile, 'utf8')).packages ?? {};
  for (const [key, want] of Object.entries(wanted)) {
    if (!key.startsWith('node_modules/')) continue;
    const have = installed[key];
    const name = key.slice('node_modules/'.length);
    if (!have) {
      if (want.optional) continue;
      return `${name} is not installed`;
    }
    if (have.version !== want.version) return `${name} is ${have.version}, package-lock.json wants ${want.version}`;
  }
  const extra = Object.keys(installed).find((key) => key.startsWith('node_modules/') && !wanted[key]);
  if (extra) return `${extra.slice('node_modules/'.length)} is installed but not in package-lock.json`;
  // sqlite3 compiles against the headers of the Node that installed it; Node 24's (N-API 10) crash Node 20.
  const gypi = path.join(root, 'node_modules', 'sqlite3', 'build', 'config.gypi');
  const napi = existsSync(gypi) ? Number(/"napi_build_version": "(\d+)"/.exec(readFileSync(gypi, 'utf8'))?.[1]) : NaN;
  if (napi > Number(process.versions.napi))
    return `sqlite3 was compiled for N-API ${napi}, newer than this Node ${process.version} (N-API ${process.versions.napi})`;
  return null;
}

const say = (line) => process.stderr.write(`[test] ${line}\n`);
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];

function run(title, argv) {
  if (dryRun) {
    say(`would run: ${title}`);
    return;
  }
  const t0 = Date.now();
  say(title);
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ROOT, stdio: 'inherit' });
  say(`${title}: ${r.status === 0 ? 'done' : 'failed'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stale = staleReason(ROOT);
  if (stale) {
    const install = existsSync(path.join(ROOT, 'package-lock.json')) ? 'ci' : 'install';
    say(`${stale}: installing the dependencies first (npm ci: 2 to 4 minutes on 2 cores, most of it compiling sqlite3)`);
    run(`npm ${install}`, [...npm, install, '--no-audit', '--no-fund']);
  } else say('node_modules matches package-lock.json');
  run('npm run build', [...npm, 'run', 'build']);
  if (!quick) {
    run('npm run lint', [...npm, 'run', 'lint']);
    run('npm run format:check', [...npm, 'run', 'format:check']);
    // The dependency policy (docs/security.md, "Dependencies"): a critical advisory fails; offline, it says it skipped.
    run('node scripts/dependency-audit.mjs', [process.execPath, path.join(ROOT, 'scripts', 'dependency-audit.mjs')]);
    // The CLI tier runs the pinned Node 24 in several files at once: install it once, before them.
    run('node release/node24/runtime.mjs', [process.execPath, path.join(ROOT, 'release', 'node24', 'runtime.mjs')]);
  }
  if (!quick) {
    const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
    if (existsSync(chromium)) say(`browser tier: on (Chromium at ${chromium})`);
    else
      say(
        `browser tier: SKIPPED, no Chromium at ${chromium} (apt-get install chromium, or set CHROMIUM_PATH); the pages and passkeys in a real browser are not tested in this run`,
      );
  }
  const tiers = quick ? ['--project', 'unit', '--project', 'smoke'] : [];
  run(`vitest run ${[...tiers, ...vitestArgs].join(' ')}`.trim(), [
    process.execPath,
    path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    ...tiers,
    ...vitestArgs,
  ]);
}
