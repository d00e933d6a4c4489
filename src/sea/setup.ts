import cluster from 'node:cluster';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import sea from 'node:sea';

/*
 * First thing the single executable runs (release/build-sea.mjs bundles it ahead of the CLI). The
 * files Gatehouse reads at run time — package.json, templates, the /docs assets — and the native
 * addons ride in the executable as SEA assets. They are written to a fresh private temp dir (mode
 * 0700, removed at exit) laid out like an installed package, and the bundle's `import.meta.url`
 * points into it, so findPackageRoot() and friends work unchanged. Addons are loaded from there with
 * process.dlopen (the bundle's `bindings` and `node-gyp-build` shims call loadNative).
 */

declare global {
  var __gatehouseMetaUrl: string;
  var __gatehouseLoadNative: (name: string) => unknown;
}

function setUp(): void {
  if (!sea.isSea()) {
    // The bundle run by plain node (a build check): its own location.
    globalThis.__gatehouseMetaUrl = pathToFileURL(__filename).href;
    return;
  }
  // A `serve --workers` worker is started as `<executable> <script> serve …`, the script being the
  // executable again (cluster runs process.argv[1]); the CLI must see `serve …`.
  if (cluster.isWorker && process.argv[2] && path.resolve(process.argv[2]) === process.execPath) process.argv.splice(2, 1);
  const root = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-'));
  process.on('exit', () => rmSync(root, { recursive: true, force: true }));
  const names = JSON.parse(sea.getAsset('assets.json', 'utf8')) as string[];
  for (const name of names) {
    const file = path.join(root, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, Buffer.from(sea.getAsset(name)));
  }
  globalThis.__gatehouseMetaUrl = pathToFileURL(path.join(root, 'dist', 'gatehouse.cjs')).href;
  globalThis.__gatehouseLoadNative = (name: string) => {
    const mod = { exports: {} as unknown };
    process.dlopen(mod, path.join(root, 'native', path.basename(name)));
    return mod.exports;
  };
}

setUp();
