import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';
import { describe, expect, it } from 'vitest';
import { API_HELMET, apiSecurityHeaders, securityHeaders } from '../../src/http/middleware/security-headers.js';

async function headersOf(mw: express.RequestHandler): Promise<Record<string, string>> {
  const app = express();
  app.use(mw);
  app.get('/', (_req, res) => {
    res.json({ ok: true });
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const out: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (!['date', 'etag', 'content-length', 'connection', 'keep-alive'].includes(k)) out[k] = v;
    });
    return out;
  } finally {
    server.close();
  }
}

describe('precomputed security headers', () => {
  it("when a response is sent, then its headers are exactly helmet's", async () => {
    const ours = await headersOf(securityHeaders());
    const theirs = await headersOf(helmet());
    expect(ours).toEqual(theirs);
    expect(ours['content-security-policy']).toContain("default-src 'self'");
    expect(ours['x-content-type-options']).toBe('nosniff');
    expect(ours['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(ours['x-powered-by']).toBeUndefined();
  });

  it("when the API set is sent, then it is helmet's with the API options plus Cache-Control: no-store", async () => {
    const ours = await headersOf(apiSecurityHeaders());
    const theirs = await headersOf(helmet(API_HELMET));
    expect(ours).toEqual({ ...theirs, 'cache-control': 'no-store' });
    expect(ours['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(ours['x-frame-options']).toBe('DENY');
    expect(ours['referrer-policy']).toBe('no-referrer');
    expect(ours['cross-origin-resource-policy']).toBe('same-origin');
    expect(ours['x-xss-protection']).toBeUndefined();
  });
});
