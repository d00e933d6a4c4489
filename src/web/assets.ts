import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { RequestHandler } from 'express';

/** Where the hashed assets are served: /web/assets/<name>.<hash>.<ext>. */
export const ASSET_PATH = '/web/assets';

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
};

export interface Asset {
  /** The source name (web.css). */
  name: string;
  /** Its served name, content hash inside (web.3f2a9c1d0b.css). */
  file: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
}

export interface AssetTable {
  /** The URL of an asset by its source name; throws for an unknown name (a template typo fails loudly). */
  url(name: string): string;
  /** Every asset, for the size budget (test/unit/web-assets.test.ts). */
  all(): readonly Asset[];
  /** Serves /web/assets/<file>: immutable, a year of cache; gzip when the browser takes it. */
  handler: RequestHandler;
}

function makeAsset(name: string, body: Buffer): Asset {
  const ext = path.extname(name).toLowerCase();
  const type = TYPES[ext];
  if (!type) throw new Error(`web asset ${name}: unknown type`);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { name, file: `${path.basename(name, ext)}.${hash}${ext}`, type, body, gzip: gzipSync(body, { level: 9 }) };
}

/**
 * The assets of templates/web/assets (shipped in the package, the release tarball and the single
 * executable with the rest of templates/), plus `extra` (the operator's logo), read once at start.
 */
export function loadAssets(dir: string, extra: { name: string; body: Buffer }[] = []): AssetTable {
  const list = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && TYPES[path.extname(e.name).toLowerCase()])
    .map((e) => makeAsset(e.name, readFileSync(path.join(dir, e.name))));
  for (const x of extra) list.push(makeAsset(x.name, x.body));
  const byName = new Map(list.map((a) => [a.name, a]));
  const byFile = new Map(list.map((a) => [a.file, a]));
  return {
    url(name) {
      const a = byName.get(name);
      if (!a) throw new Error(`no web asset named ${name}`);
      return `${ASSET_PATH}/${a.file}`;
    },
    all: () => list,
    handler(req, res, next) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      const a = byFile.get(req.path.replace(/^\//, ''));
      if (!a) return next();
      const gz = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
      res.setHeader('Content-Type', a.type);
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.setHeader('Vary', 'Accept-Encoding');
      // An asset is never a document: nothing in it may run or load anything.
      res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
      if (gz) res.setHeader('Content-Encoding', 'gzip');
      res.end(req.method === 'HEAD' ? undefined : gz ? a.gzip : a.body);
    },
  };
}
