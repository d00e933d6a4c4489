import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBody, parseSize, readAsJson } from '../../src/http/middleware/json-body.js';

/** What a route sees (or the error the middleware raised): the body, whether the lean path read it. */
function appWith(parser: express.RequestHandler) {
  const app = express();
  app.use(parser);
  app.post('/', (req, res) => {
    res.json({ body: req.body === undefined ? '<undefined>' : req.body, lean: readAsJson(req) });
  });
  app.use((err: { status?: number; type?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(err.status ?? 500).json({ error: err.type ?? 'unknown' });
  });
  return app;
}

async function listen(app: express.Express): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A raw request, so Content-Length, chunking and encodings are exactly what the case says. */
function send(port: number, body: Buffer | null, headers: Record<string, string>, chunked = false): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    if (body && chunked) {
      req.write(body.subarray(0, 1));
      req.end(body.subarray(1));
    } else req.end(body ?? undefined);
  });
}

const LIMIT = '1kb';
let lean: { server: http.Server; port: number };
let reference: { server: http.Server; port: number };

beforeAll(async () => {
  lean = await listen(appWith(jsonBody(LIMIT)));
  reference = await listen(appWith(express.json({ limit: LIMIT, type: ['application/json', 'application/*+json'] })));
});
afterAll(() => {
  lean.server.close();
  reference.server.close();
});

const json = 'application/json';
const cases: { name: string; body: Buffer | null; type?: string; extra?: Record<string, string>; chunked?: boolean; leanPath: boolean }[] = [
  { name: 'an object', body: Buffer.from('{"a":1,"b":[true,null]}'), type: json, leanPath: true },
  { name: 'an array', body: Buffer.from('[1,2]'), type: json, leanPath: true },
  { name: 'charset=utf-8 in any spelling', body: Buffer.from('{"a":"é"}'), type: 'Application/JSON; Charset="UTF-8"', leanPath: true },
  { name: 'a leading BOM', body: Buffer.from('\ufeff{"a":1}'), type: json, leanPath: true },
  { name: 'leading whitespace', body: Buffer.from(' \n\t{"a":1}'), type: json, leanPath: true },
  { name: 'an empty body', body: Buffer.alloc(0), type: json, leanPath: true },
  { name: 'only whitespace', body: Buffer.from('   '), type: json, leanPath: true },
  { name: 'a bare string (not strict JSON)', body: Buffer.from('"x"'), type: json, leanPath: true },
  { name: 'a bare number', body: Buffer.from('12'), type: json, leanPath: true },
  { name: 'malformed JSON', body: Buffer.from('{"a":'), type: json, leanPath: true },
  { name: 'a __proto__ key (kept as data)', body: Buffer.from('{"__proto__":{"admin":true}}'), type: json, leanPath: true },
  { name: 'invalid UTF-8 bytes', body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), type: json, leanPath: true },
  { name: 'a body over the limit', body: Buffer.from(`{"a":"${'x'.repeat(2000)}"}`), type: json, leanPath: true },
  { name: 'a body at the limit', body: Buffer.from(`{"a":"${'x'.repeat(1024 - 8)}"}`), type: json, leanPath: true },
  { name: 'a +json type', body: Buffer.from('{"a":1}'), type: 'application/merge-patch+json', leanPath: false },
  { name: 'a chunked body', body: Buffer.from('{"a":1}'), type: json, chunked: true, leanPath: false },
  { name: 'a gzip body', body: gzipSync('{"a":1}'), type: json, extra: { 'Content-Encoding': 'gzip' }, leanPath: false },
  { name: 'charset=utf-16', body: Buffer.from('{"a":1}', 'utf16le'), type: 'application/json; charset=utf-16', leanPath: false },
  { name: 'charset=latin1', body: Buffer.from('{"a":1}'), type: 'application/json; charset=latin1', leanPath: false },
  { name: 'a text/plain body', body: Buffer.from('{"a":1}'), type: 'text/plain', leanPath: false },
  { name: 'no Content-Type', body: Buffer.from('{"a":1}'), leanPath: false },
];

describe('jsonBody: the lean reader answers as express.json does', () => {
  for (const c of cases) {
    it(`when the body is ${c.name}, then the status, body and error type match body-parser's`, async () => {
      const headers: Record<string, string> = { ...(c.type ? { 'Content-Type': c.type } : {}), ...(c.extra ?? {}) };
      if (c.body && !c.chunked) headers['Content-Length'] = String(c.body.length);
      const ours = await send(lean.port, c.body, headers, c.chunked);
      const theirs = await send(reference.port, c.body, headers, c.chunked);
      expect(ours.status).toBe(theirs.status);
      if ('lean' in theirs.json) {
        expect(ours.json.body).toEqual(theirs.json.body);
        expect(ours.json.lean).toBe(c.leanPath);
      } else {
        expect(ours.json).toEqual(theirs.json);
      }
    });
  }

  it('when a Content-Length over the limit is announced, then 413 comes before any byte is read', async () => {
    const r = await new Promise<{ status: number; json: any }>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: lean.port, method: 'POST', path: '/', headers: { 'Content-Type': json, 'Content-Length': '1000000' } },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.flushHeaders(); // the body never comes
    });
    expect(r).toEqual({ status: 413, json: { error: 'entity.too.large' } });
  });

  it('when a client goes away in the middle of a body, then the server keeps serving', async () => {
    await new Promise<void>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port: lean.port, method: 'POST', path: '/', headers: { 'Content-Type': json, 'Content-Length': '100' } });
      req.on('error', () => resolve());
      req.write('{"a":');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50);
    });
    const after = await send(lean.port, Buffer.from('{"ok":true}'), { 'Content-Type': json, 'Content-Length': '11' });
    expect(after).toEqual({ status: 200, json: { body: { ok: true }, lean: true } });
  });
});

describe('parseSize', () => {
  it('when given the config formats, then it answers bytes; anything else throws', () => {
    expect(parseSize('100kb')).toBe(102_400);
    expect(parseSize('2MB')).toBe(2 * 1024 * 1024);
    expect(parseSize('512b')).toBe(512);
    expect(() => parseSize('ten')).toThrow(/not a size/);
  });
});
