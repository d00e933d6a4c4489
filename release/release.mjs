#!/usr/bin/env node
// npm run release: build/release/gatehouse-<version>.tar.gz — the source tree install.sh installs
// from, with the single executable (build/gatehouse, built first) beside it — plus its sha256.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const name = `gatehouse-${version}`;
const OUT = path.join(ROOT, 'build', 'release');
const stage = path.join(OUT, name);

execFileSync(process.execPath, [path.join(ROOT, 'release', 'build-sea.mjs')], { stdio: 'inherit' });

rmSync(OUT, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
// What install.sh needs to install and build (it runs npm ci and the TypeScript build itself).
const entries = [
  'bin',
  'entry',
  'src',
  'modules',
  'templates',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'README.md',
  'install.sh',
  'docs',
];
for (const e of entries)
  if (existsSync(path.join(ROOT, e))) cpSync(path.join(ROOT, e), path.join(stage, e), { recursive: true, filter: (src) => !/\.test\.ts$/.test(src) });
cpSync(path.join(ROOT, 'build', 'gatehouse'), path.join(stage, 'gatehouse'));

const tarball = path.join(OUT, `${name}.tar.gz`);
execFileSync('tar', ['-czf', tarball, '-C', OUT, name]);
rmSync(stage, { recursive: true, force: true });
const sum = createHash('sha256').update(readFileSync(tarball)).digest('hex');
writeFileSync(`${tarball}.sha256`, `${sum}  ${path.basename(tarball)}\n`);
process.stderr.write(`  ✔ ${path.relative(ROOT, tarball)} (sha256 ${sum})\n`);
