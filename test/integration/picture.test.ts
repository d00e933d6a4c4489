import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession } from '../helpers/factories.js';
import { jpeg, pictureForm, png, webpExtended, webpLossless, webpLossy } from './picture-images.js';

const PUBLIC_URL = 'https://auth.example.test';
const MAX_BYTES = 4096;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_URL, PICTURE_MAX_BYTES: String(MAX_BYTES) } });
});
afterAll(async () => t?.close());

const picturesDir = () => path.join(t.dataDir, 'pictures');
const fileOf = (url: string) => path.join(picturesDir(), url.slice(`${PUBLIC_URL}/uploads/pictures/`.length));
const served = (url: string) => fetch(t.url + new URL(url).pathname);

async function upload(token: string, bytes: Buffer, opts: Parameters<typeof pictureForm>[1] = {}, query = '') {
  return t.request('POST', `/auth/upload/picture${query}`, { session: token, raw: pictureForm(bytes, opts) });
}

describe('POST /auth/upload/picture', () => {
  const cases = [
    { name: 'JPEG', bytes: jpeg(), ext: 'jpg', type: 'image/jpeg' },
    { name: 'PNG', bytes: png(), ext: 'png', type: 'image/png' },
    { name: 'lossy WebP', bytes: webpLossy(), ext: 'webp', type: 'image/webp' },
    { name: 'lossless WebP', bytes: webpLossless(), ext: 'webp', type: 'image/webp' },
    { name: 'extended WebP', bytes: webpExtended(), ext: 'webp', type: 'image/webp' },
  ];
  for (const c of cases) {
    it(`when a ${c.name} is uploaded, then it is stored, set on the user and served with its type`, async () => {
      const { user, token } = await makeSession(t);
      const r = await upload(token, c.bytes, { filename: 'whatever.gif', type: 'text/plain' });
      expect(r.status).toBe(200);
      expect(r.body.success).toBe(true);
      const url: string = r.body.data.picture_url;
      expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/uploads/pictures/[0-9a-f]{42}\\.${c.ext}$`));
      expect(r.body.data.picture).toBe(url);
      expect(r.body.data.user).toMatchObject({ id: user.id, email: user.email, picture: url });
      expect(r.body.data.user).not.toHaveProperty('password_hash');
      expect((await t.app.repos.users.findById(user.id))!.picture).toBe(url);

      const st = statSync(fileOf(url));
      expect(st.mode & 0o777).toBe(0o644);
      const got = await served(url);
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe(c.type);
      // Shown in place under a fixed name, whatever the upload was called (ASVS 5.4.1); never sniffed.
      expect(got.headers.get('content-disposition')).toBe(`inline; filename="picture.${c.ext}"`);
      expect(got.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await got.arrayBuffer()).equals(c.bytes)).toBe(true);
    });
  }

  it('when the served picture is fetched, then it cannot be sniffed or run and may be cached and embedded', async () => {
    const { token } = await makeSession(t);
    const r = await upload(token, png());
    const got = await served(r.body.data.picture_url);
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('content-disposition')).toBe('inline; filename="picture.png"');
    expect(got.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(got.headers.get('cache-control')).toMatch(/max-age=31536000/);
    expect(got.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
  });

  it('when a text file is named .png and declared image/png, then it is refused 400 UNSUPPORTED_IMAGE and nothing is stored', async () => {
    const { user, token } = await makeSession(t);
    const before = existsSync(picturesDir()) ? readdirSync(picturesDir()).length : 0;
    const r = await upload(token, Buffer.from('hello, I am not a picture\n'.repeat(4)), { filename: 'me.png', type: 'image/png' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, code: 'UNSUPPORTED_IMAGE' });
    expect(typeof r.body.error).toBe('string');
    expect((await t.app.repos.users.findById(user.id))!.picture).toBeNull();
    expect(existsSync(picturesDir()) ? readdirSync(picturesDir()).length : 0).toBe(before);
  });

  it('when a GIF is uploaded, then it is refused 400 UNSUPPORTED_IMAGE', async () => {
    const { token } = await makeSession(t);
    const gif = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
    const r = await upload(token, gif, { filename: 'a.jpg', type: 'image/jpeg' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('UNSUPPORTED_IMAGE');
  });

  it('when the header declares absurd dimensions, then it is refused 400 UNSUPPORTED_IMAGE', async () => {
    const { token } = await makeSession(t);
    const r = await upload(token, jpeg({ width: 60000, height: 60000 }));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('UNSUPPORTED_IMAGE');
    expect(r.body.error).toMatch(/60000x60000/);
  });

  it('when the file is over the size limit, then the answer is 413 PAYLOAD_TOO_LARGE', async () => {
    const { user, token } = await makeSession(t);
    const big = Buffer.concat([png(), Buffer.alloc(MAX_BYTES)]);
    const r = await upload(token, big);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
    expect((await t.app.repos.users.findById(user.id))!.picture).toBeNull();
  });

  it('when there is no session, then the answer is 401', async () => {
    const r = await t.request('POST', '/auth/upload/picture', { raw: pictureForm(png()) });
    expect(r.status).toBe(401);
    expect(r.body.success).toBe(false);
  });

  it('when the session comes in ?session_id=, then the upload is accepted', async () => {
    const { user } = await makeSession(t);
    const { token } = await t.app.services.sessions.create(user.id, {});
    const r = await t.request('POST', `/auth/upload/picture?session_id=${encodeURIComponent(token)}`, { raw: pictureForm(png()) });
    expect(r.status).toBe(200);
    expect(r.body.data.user.id).toBe(user.id);
  });

  it('when no file is sent, then the answer is 400 naming the picture field', async () => {
    const { token } = await makeSession(t);
    const form = new FormData();
    form.append('name', 'x');
    const r = await t.request('POST', '/auth/upload/picture', { session: token, raw: form });
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.error).toContain('picture');
    const empty = await t.request('POST', '/auth/upload/picture', { session: token });
    expect(empty.status).toBe(400);
  });

  it('when the body is JSON, then the answer is 415', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('POST', '/auth/upload/picture', { session: token, body: { picture: png().toString('base64') } });
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({ success: false, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('when the file comes in another field, then the answer is 400', async () => {
    const { token } = await makeSession(t);
    const r = await upload(token, png(), { field: 'avatar' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(r.body.error).toContain('avatar');
  });

  it('when a user uploads again, then the previous file is removed and the old URL answers a JSON 404', async () => {
    const { token } = await makeSession(t);
    const first = (await upload(token, png())).body.data.picture_url as string;
    const second = await upload(token, jpeg());
    expect(second.status).toBe(200);
    expect(second.body.data.picture_url).not.toBe(first);
    expect(existsSync(fileOf(first))).toBe(false);
    expect(existsSync(fileOf(second.body.data.picture_url))).toBe(true);
    const gone = await served(first);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('when the user changes picture, then a cached copy of the user is not served', async () => {
    const { user, token } = await makeSession(t);
    await t.app.services.sessions.validate(token);
    const r = await upload(token, png());
    const v = await t.app.services.sessions.validate(token);
    expect(v.user.id).toBe(user.id);
    expect(v.user.picture).toBe(r.body.data.picture_url);
  });
});

describe('DELETE /auth/upload/picture', () => {
  it('when the user deletes the picture, then the file is removed and picture becomes null', async () => {
    const { user, token } = await makeSession(t);
    const url = (await upload(token, webpLossy())).body.data.picture_url as string;
    const r = await t.request('DELETE', '/auth/upload/picture', { session: token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Picture deleted', data: { user: { id: user.id, picture: null } } });
    expect(existsSync(fileOf(url))).toBe(false);
    expect((await t.app.repos.users.findById(user.id))!.picture).toBeNull();
    expect((await t.app.services.sessions.validate(token)).user.picture).toBeNull();
    expect((await served(url)).status).toBe(404);
  });

  it('when there is no picture, then deleting still succeeds', async () => {
    const { token } = await makeSession(t);
    const r = await t.request('DELETE', '/auth/upload/picture', { session: token });
    expect(r.status).toBe(200);
    expect(r.body.data.user.picture).toBeNull();
  });

  it('when there is no session, then the answer is 401', async () => {
    const r = await t.request('DELETE', '/auth/upload/picture');
    expect(r.status).toBe(401);
  });
});

describe('GET /uploads/pictures/*', () => {
  it('when the file does not exist, then the answer is a JSON 404', async () => {
    const r = await t.request('GET', '/uploads/pictures/0123456789abcdef.png');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ success: false, error: 'Not found', code: 'NOT_FOUND' });
  });

  it('when a path tries to leave the pictures folder, then nothing outside is served', async () => {
    const r = await t.request('GET', '/uploads/pictures/..%2fgatehouse.sqlite');
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.headers.get('content-type')).toContain('application/json');
  });
});
