#!/usr/bin/env node
// Builds build/gatehouse: one executable with Node, Gatehouse, its templates, the /docs assets and the
// native addons (sqlite3, bcrypt), using Node's single executable applications, offline:
// esbuild (CommonJS, node24) → node --experimental-sea-config → copy node → strip → postject.
// The Node inside is the pinned Node 24 LTS (release/node24), whatever node runs this script.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { ensureNode24 } from './node24/runtime.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'build');
const WORK = path.join(OUT, 'sea');
const EXE = path.join(OUT, 'gatehouse');
const require = createRequire(import.meta.url);
const t0 = Date.now();
const step = (s) => process.stderr.write(`  … ${s} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
// The blob must be made by the node it is injected into.
const NODE = ensureNode24();

rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });

// Native addons are loaded by the SEA set-up (src/sea/setup.ts) from the assets written at start.
const nativeShims = {
  name: 'native-shims',
  setup(build) {
    // The addon is named after the package that loads it (bcrypt → bcrypt.node); bindings names its own.
    build.onResolve({ filter: /^(bindings|node-gyp-build)$/ }, (args) => ({
      path: `${args.path}:${/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(args.importer)?.[1] ?? 'unknown'}`,
      namespace: 'native-shim',
    }));
    build.onLoad({ filter: /.*/, namespace: 'native-shim' }, (args) => {
      const [kind, pkg] = args.path.split(':');
      return {
        contents:
          kind === 'bindings'
            ? 'module.exports = (name) => globalThis.__gatehouseLoadNative(typeof name === "string" ? name : name.bindings);'
            : `module.exports = () => globalThis.__gatehouseLoadNative(${JSON.stringify(`${pkg}.node`)});`,
        loader: 'js',
      };
    });
  },
};

step('bundling with esbuild');
const bundle = path.join(WORK, 'gatehouse.cjs');
await esbuild.build({
  entryPoints: [path.join(ROOT, 'entry/sea.ts')],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  minify: true,
  legalComments: 'none',
  // ESM sources read import.meta.url; in the bundle it points into the extracted package (setup.ts).
  define: { 'import.meta.url': 'globalThis.__gatehouseMetaUrl' },
  // Optional peers never used here (pg's native binding, Sequelize's other dialects, …).
  external: ['pg-native', 'mysql2', 'mariadb', 'tedious', 'oracledb', 'ibm_db', 'snowflake-sdk', 'pg-query-stream'],
  plugins: [nativeShims],
  logLevel: 'warning',
});

step('collecting assets');
const assets = {};
const addFile = (name, file) => (assets[name] = file);
const addTree = (prefix, dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) addTree(`${prefix}/${entry.name}`, full);
    else if (entry.isFile()) addFile(`${prefix}/${entry.name}`, full);
  }
};
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
writeFileSync(path.join(WORK, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, type: 'commonjs' }));
addFile('package.json', path.join(WORK, 'package.json'));
addTree('templates', path.join(ROOT, 'templates'));
// Modules' own email templates (modules/<id>/emails), found from the package root like core's.
for (const m of readdirSync(path.join(ROOT, 'modules'), { withFileTypes: true })) {
  const emails = path.join(ROOT, 'modules', m.name, 'emails');
  if (m.isDirectory() && existsSync(emails)) addTree(`modules/${m.name}/emails`, emails);
  // Its pages' templates and strings (modules/<id>/web: *.eta and i18n/*.json; the code is in the bundle).
  const web = path.join(ROOT, 'modules', m.name, 'web');
  if (m.isDirectory() && existsSync(web)) {
    for (const f of readdirSync(web, { recursive: true, encoding: 'utf8' }).filter((x) => x.endsWith('.eta') || x.endsWith('.json')))
      addFile(`modules/${m.name}/web/${f.split(path.sep).join('/')}`, path.join(web, f));
  }
}
const swagger = path.dirname(require.resolve('swagger-ui-dist/package.json'));
for (const f of ['package.json', 'swagger-ui.css', 'swagger-ui-bundle.js']) addFile(`node_modules/swagger-ui-dist/${f}`, path.join(swagger, f));
const sqliteAddon = path.join(path.dirname(require.resolve('sqlite3/package.json')), 'build', 'Release', 'node_sqlite3.node');
const bcryptDir = path.join(path.dirname(require.resolve('bcrypt/package.json')), 'prebuilds', `${process.platform}-${process.arch}`);
const bcryptAddon = ['bcrypt.glibc.node', 'bcrypt.node'].map((f) => path.join(bcryptDir, f)).find(existsSync);
if (!existsSync(sqliteAddon) || !bcryptAddon) throw new Error('native addons not found: run npm install first');
addFile('native/node_sqlite3.node', sqliteAddon);
// N-API addons compiled against older headers load in Node 24 too; a release installs with Node 24's (.ci/run, README).
const builtFor = /"node_module_version": (\d+)/.exec(readFileSync(path.join(path.dirname(sqliteAddon), '..', 'config.gypi'), 'utf8'))?.[1];
if (builtFor !== execFileSync(NODE, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).trim())
  step(`note: sqlite3 was compiled against other Node headers (ABI ${builtFor}); its N-API addon loads in Node 24`);
addFile('native/bcrypt.node', bcryptAddon);
const listFile = path.join(WORK, 'assets.json');
writeFileSync(listFile, JSON.stringify(Object.keys(assets)));

step('preparing the blob');
const seaConfig = path.join(WORK, 'sea-config.json');
const blob = path.join(WORK, 'sea-prep.blob');
writeFileSync(
  seaConfig,
  JSON.stringify({
    main: bundle,
    output: blob,
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    useCodeCache: true,
    assets: { 'assets.json': listFile, ...assets },
  }),
);
execFileSync(NODE, ['--experimental-sea-config', seaConfig], { stdio: 'inherit' });

step('copying node, stripping, injecting');
copyFileSync(NODE, EXE);
chmodSync(EXE, 0o755);
// Debug symbols are most of the node binary; the fuse and the blob go in after.
execFileSync('strip', [EXE]);
const postject = path.join(path.dirname(require.resolve('postject/package.json')), 'dist', 'cli.js');
const injected = spawnSync(process.execPath, [postject, EXE, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'], {
  stdio: ['ignore', 'ignore', 'pipe'],
  encoding: 'utf8',
});
// LIEF (inside postject) warns a dozen times that it finds no name for the note sections it rewrites:
// "Can't find string offset for section name '.note.100'". Known and harmless (nodejs/postject#83,
// lief-project/LIEF#816; test/cli/release.test.ts runs the executable). Only that line is dropped:
// anything else postject says is shown, and a failure still stops the build.
const harmless = /^warning: Can't find string offset for section name '\.note(\.\d+)?'$/;
const said = (injected.stderr ?? '').split('\n').filter((l) => l.trim() && !harmless.test(l.trim()));
if (said.length) process.stderr.write(`${said.join('\n')}\n`);
if (injected.status !== 0) throw new Error(`postject failed (exit ${injected.status ?? injected.signal})`);

const mb = (f) => (statSync(f).size / 1024 / 1024).toFixed(1);
step(`done: ${path.relative(ROOT, EXE)} ${mb(EXE)} MB (bundle ${mb(bundle)} MB, blob ${mb(blob)} MB)`);
