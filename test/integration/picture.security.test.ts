import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession } from '../helpers/factories.js';
import { pictureForm, png } from './picture-images.js';

const PUBLIC_URL = 'https://auth.example.test';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_URL } });
});
afterAll(async () => t?.close());

const fileOf = (url: string) => path.join(t.dataDir, 'pictures', url.slice(`${PUBLIC_URL}/uploads/pictures/`.length));
const upload = (token: string) => t.request('POST', '/auth/upload/picture', { session: token, raw: pictureForm(png()) });

describe('picture ownership', () => {
  it("when a user points picture at another user's file and then uploads, then the other user's file survives", async () => {
    const victim = await makeSession(t);
    const victimUrl = (await upload(victim.token)).body.data.picture_url as string;
    const attacker = await makeSession(t);
    // `picture` is writable through the profile, so it can name any URL.
    await t.app.repos.users.update(attacker.user.id, { picture: victimUrl });
    await t.app.services.sessions.invalidateUser(attacker.user.id);

    const r = await upload(attacker.token);
    expect(r.status).toBe(200);
    expect(existsSync(fileOf(victimUrl))).toBe(true);

    await t.app.repos.users.update(attacker.user.id, { picture: victimUrl });
    await t.app.services.sessions.invalidateUser(attacker.user.id);
    const d = await t.request('DELETE', '/auth/upload/picture', { session: attacker.token });
    expect(d.status).toBe(200);
    expect(existsSync(fileOf(victimUrl))).toBe(true);
    expect((await t.request('GET', new URL(victimUrl).pathname)).status).toBe(200);
  });

  it('when the picture is an outside URL, then uploading replaces it without touching any file', async () => {
    const { user, token } = await makeSession(t, { picture: 'https://cdn.example.org/me.png' });
    const r = await upload(token);
    expect(r.status).toBe(200);
    expect((await t.app.repos.users.findById(user.id))!.picture).toBe(r.body.data.picture_url);
  });

  it('when an HTML file is uploaded under an image type, then it is refused and never served', async () => {
    const { token } = await makeSession(t);
    const html = Buffer.from('<html><script>alert(document.cookie)</script></html>');
    const r = await t.request('POST', '/auth/upload/picture', {
      session: token,
      raw: pictureForm(html, { filename: 'x.jpg', type: 'image/jpeg' }),
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('UNSUPPORTED_IMAGE');
  });

  it('when an image has HTML appended, then it is served as an image with a CSP that blocks everything', async () => {
    const { token } = await makeSession(t);
    const polyglot = Buffer.concat([png(), Buffer.from('<html><script>alert(1)</script></html>')]);
    const r = await t.request('POST', '/auth/upload/picture', { session: token, raw: pictureForm(polyglot, { filename: 'x.html', type: 'text/html' }) });
    expect(r.status).toBe(200);
    expect(r.body.data.picture_url).toMatch(/\.png$/);
    const got = await fetch(t.url + new URL(r.body.data.picture_url).pathname);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(got.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox/);
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('oversized uploads', () => {
  /**
   * Sends the head of a multipart upload and `sent` bytes of file, then keeps the request open
   * (the rest never comes); resolves with the answer's status, or 0 if none came within 5 s.
   */
  async function answerBeforeTheEnd(token: string, opts: { declared?: number; sent: number }): Promise<number> {
    const http = await import('node:http');
    const boundary = 'gatehouse-test-boundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="picture"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
    const headers: Record<string, string | number> = { 'X-Session-ID': token, 'Content-Type': `multipart/form-data; boundary=${boundary}` };
    if (opts.declared !== undefined) headers['Content-Length'] = opts.declared;
    return new Promise((resolve) => {
      const req = http.request(`${t.url}/auth/upload/picture`, { method: 'POST', headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', () => undefined);
      const timer = setTimeout(() => (resolve(0), req.destroy()), 5000);
      req.on('close', () => clearTimeout(timer));
      req.write(head);
      const chunk = Buffer.alloc(64 * 1024, 1);
      for (let n = 0; n < opts.sent; n += chunk.length) req.write(chunk);
    });
  }

  it('when an upload declares 300 MB, then 413 comes back at once, without the body being read', async () => {
    const { token } = await makeSession(t);
    expect(await answerBeforeTheEnd(token, { declared: 300 * 1024 * 1024, sent: 256 * 1024 })).toBe(413);
  });

  it('when a chunked upload passes the limit, then 413 comes back without waiting for the rest', async () => {
    const { token } = await makeSession(t);
    // 6 MB sent of an upload that never ends; the limit is 5 MB.
    expect(await answerBeforeTheEnd(token, { sent: 6 * 1024 * 1024 })).toBe(413);
  });
});
