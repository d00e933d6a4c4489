import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { png, pictureForm } from '../integration/picture-images.js';
import { json, LISTENING, runCli, startCli } from '../helpers/cli.js';

const PASSWORD = 'Backup-Round-Trip-42';

async function withServer<T>(dir: string, env: Record<string, string>, fn: (url: string) => Promise<T>): Promise<T> {
  const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env });
  const url = (await s.waitFor(LISTENING))[1];
  try {
    return await fn(url);
  } finally {
    s.child.kill('SIGTERM');
    await s.exited;
  }
}

const login = (url: string, email: string) =>
  fetch(`${url}/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });

async function createUser(dir: string, env: Record<string, string>, email: string): Promise<void> {
  const r = await runCli(['user', 'create', '--type', 'customer', '--email', email, '--password-stdin', '--data-dir', dir], { env, input: PASSWORD });
  expect(r.code, r.stderr).toBe(0);
}

/**
 * A populated instance (a user with a picture) is backed up, then changed (a user added, the first
 * one's picture replaced, config.json edited), then restored: everything is as at the backup.
 */
export async function backupRoundTrip(dir: string, env: Record<string, string> = {}): Promise<void> {
  const stamp = Date.now().toString(36);
  const kept = `kept.${stamp}@example.test`;
  const later = `later.${stamp}@example.test`;
  await createUser(dir, env, kept);
  const pictureUrl = await withServer(dir, env, async (url) => {
    const session = ((await (await login(url, kept)).json()) as { session_id: string }).session_id;
    const up = await fetch(`${url}/auth/upload/picture`, { method: 'POST', headers: { 'X-Session-ID': session }, body: pictureForm(png()) });
    expect(up.status).toBe(200);
    return ((await up.json()) as { data: { picture_url: string } }).data.picture_url;
  });

  const backup = await runCli(['backup', '--json', '--data-dir', dir], { env });
  expect(backup.code, backup.stderr).toBe(0);
  const { file, sha256, manifest } = json(backup);
  expect(sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(Object.keys(manifest.files)).toEqual(expect.arrayContaining(['config.json', expect.stringMatching(/^pictures\//)]));
  expect(manifest.migrations.length).toBeGreaterThanOrEqual(4);

  await createUser(dir, env, later);
  const edited = await runCli(['init', '--yes', '--port', '9', '--data-dir', dir], { env });
  expect(edited.code, edited.stderr).toBe(0);

  const refused = await runCli(['restore', file, '--data-dir', dir], { env });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('missing --yes');
  const restore = await runCli(['restore', file, '--yes', '--json', '--data-dir', dir], { env });
  expect(restore.code, restore.stderr).toBe(0);
  expect(json(restore).restored.length).toBeGreaterThanOrEqual(3);
  expect(JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')).PORT).not.toBe(9);
  expect(JSON.parse(readFileSync(path.join(dir, 'config.json.before-restore'), 'utf8')).PORT).toBe(9);

  await withServer(dir, env, async (url) => {
    expect((await login(url, kept)).status).toBe(200);
    expect((await login(url, later)).status).toBe(401);
    const picture = await fetch(`${url}${new URL(pictureUrl).pathname}`);
    expect(picture.status).toBe(200);
    expect(Buffer.from(await picture.arrayBuffer()).equals(png())).toBe(true);
  });
}
