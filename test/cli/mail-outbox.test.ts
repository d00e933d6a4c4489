import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../modules/index.js';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/load-config.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { createLogger } from '../../src/log/logger.js';
import { moduleEnvNames } from '../../src/modules/module-env.js';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

/*
 * `gatehouse mail outbox`: the .eml files the embedded default writes to <data dir>/outbox, decoded.
 * The reset link is long enough that quoted-printable breaks it across lines in the file (checked
 * below): the command must print it whole.
 */

let dir: string;
const LINK = `http://localhost:8787/reset-password?token=${'t0K3n-'.repeat(20)}end&lang=en`;
const jane = 'jane@example.test';
const bob = 'bob@example.test';

/** A hand-made message the way other mailers write them: base64 text part, an encoded-word subject. */
const BASE64_MAIL = [
  'From: Other <other@example.test>',
  `To: ${bob}`,
  'Subject: =?UTF-8?B?w4lsw6hWZQ==?=',
  'Date: Tue, 01 Dec 2026 10:00:00 +0000',
  'MIME-Version: 1.0',
  'Content-Type: multipart/alternative; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('Ciao ñandú: https://example.test/welcome?x=1.\n').toString('base64'),
  '--b1',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Ciao</p>',
  '--b1--',
  '',
].join('\r\n');

const outbox = (args: string[]) => runCli(['mail', 'outbox', ...args, '--data-dir', dir]);

beforeAll(async () => {
  dir = tempDir();
  const init = await runCli(['init', '--yes', '--data-dir', dir]);
  expect(init.code, init.stderr).toBe(0);
}, 120_000);
afterAll(removeTempDirs);

describe('gatehouse mail outbox', () => {
  it('when nothing was ever written, then it says there is no outbox and exits 0', async () => {
    const r = await outbox([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`No outbox at ${path.join(dir, 'outbox')}`);
    expect(json(await outbox(['--json']))).toEqual({ success: true, outbox: path.join(dir, 'outbox'), exists: false, mails: [] });
  });

  it('when mails are there, then each is shown decoded with its headers, and --links prints the links whole', async () => {
    const config = loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, LOG_LEVEL: 'silent' }, moduleEnv: moduleEnvNames(registry) });
    const app = await createAppContext(config, { logger: createLogger('silent'), moduleRegistry: registry, coreRoutes });
    try {
      await app.services.mailer.send({ to: jane, template: 'password-reset', lang: null, data: { link: LINK, name: 'Jane', expiresMinutes: 60 } });
    } finally {
      await app.close();
    }
    const sent = await runCli(['mail', 'test', '--to', bob, '--data-dir', dir]);
    expect(sent.code, sent.stderr).toBe(0);
    writeFileSync(path.join(dir, 'outbox', '2099-01-01T00-00-00-000Z-00000000-other.eml'), BASE64_MAIL);
    // The link is split in the file (a soft line break), so a plain grep of the outbox cannot find it.
    const raw = readdirSync(path.join(dir, 'outbox')).find((f) => f.endsWith('-password-reset.eml'))!;
    expect(readFileSync(path.join(dir, 'outbox', raw), 'utf8')).not.toContain(LINK);

    const r = await outbox([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`To:      ${jane}`);
    expect(r.stdout).toMatch(/Subject: .*password/i);
    expect(r.stdout).toContain(LINK);
    expect(r.stdout).not.toMatch(/=\r?\n|=3D/);
    expect(r.stdout).toContain('Subject: ÉlèVe');
    expect(r.stdout).toContain('Ciao ñandú');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`3 messages in ${path.join(dir, 'outbox')}`);

    const links = await outbox(['--links']);
    expect(links.code, links.stderr).toBe(0);
    const lines = links.stdout.trimEnd().split('\n');
    expect(lines).toContain(LINK);
    expect(lines.at(-1)).toBe('https://example.test/welcome?x=1');
    for (const l of lines) expect(l).toMatch(/^https?:\/\/\S+$/);
  });

  it('when filtered with --to and --last, then only those messages are shown; --json gives them for scripts', async () => {
    const forJane = json(await outbox(['--to', jane.toUpperCase(), '--json']));
    expect(forJane.mails).toHaveLength(1);
    expect(forJane.mails[0]).toMatchObject({ to: [jane], links: expect.arrayContaining([LINK]), date: expect.any(String) });
    expect(forJane.mails[0].text).toContain(LINK);

    const last = json(await outbox(['--last', '2', '--json']));
    expect(last.mails.map((m: { to: string[] }) => m.to[0])).toEqual([bob, bob]);
    const lastLinks = await outbox(['--to', jane, '--links', '--last', '1']);
    expect(lastLinks.stdout.trim().split('\n')).toEqual(expect.arrayContaining([LINK]));

    const none = await outbox(['--to', 'nobody@example.test']);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('No message');
  });

  it.each([
    [['--last', '0'], '--last'],
    [['--last', 'many'], '--last'],
    [['--to', 'not-an-address'], '--to'],
    [['--colour'], 'unknown option'],
  ])('when run with %j, then it exits 2 and says what is wrong', async (args, says) => {
    const r = await outbox(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(says);
    expect(r.stdout).toBe('');
  });
});
