import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type RequestHandler } from 'express';

/*
 * /docs: the API reference in Swagger UI, served from the swagger-ui-dist package on this server
 * (no CDN), so it works offline and under a strict CSP. It reads /openapi.json of this server.
 */

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, layout: 'BaseLayout' });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gatehouse API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"><noscript>The reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// Swagger UI sets inline styles and loads its own images as data: URLs; nothing leaves this origin.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Where swagger-ui-dist's files are; replaceable where they come from elsewhere (the single executable). */
export type AssetReader = (name: string) => Buffer;

export const packageAssets: AssetReader = (() => {
  let dir: string | null = null;
  return (name: string) => {
    dir ??= path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    return readFileSync(path.join(dir, name));
  };
})();

/** The router mounted at /docs. Assets are read once, on first use. */
export function docsPage(read: AssetReader = packageAssets): RequestHandler {
  const cache = new Map<string, Buffer>();
  const router = express.Router({ strict: true });
  const send =
    (type: string, body: string | Buffer, cacheable: boolean): RequestHandler =>
    (_req, res) => {
      res.setHeader('Content-Security-Policy', CSP);
      res.setHeader('Cache-Control', cacheable ? 'public, max-age=3600' : 'no-store');
      res.type(type).send(body);
    };
  router.get('/', send('text/html; charset=utf-8', PAGE, false));
  router.get('/init.js', send('text/javascript; charset=utf-8', INIT_JS, true));
  for (const [name, type] of Object.entries(ASSETS)) {
    router.get(`/${name}`, (req, res, next) => {
      let body = cache.get(name);
      if (!body) cache.set(name, (body = read(name)));
      send(type, body, true)(req, res, next);
    });
  }
  return router;
}
