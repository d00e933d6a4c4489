import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../modules/index.js';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/load-config.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { createLogger } from '../../src/log/logger.js';
import { moduleEnvNames } from '../../src/modules/module-env.js';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

/*
 * `gatehouse user list | show | disable | enable`: the admin API's user service from the command line.
 * Disabling goes the API's way (adminUpdate): user.disabled and session.revoked events, every session gone.
 */

let dir: string;
const stamp = Date.now();
const long = `a.rather.long.mailbox.name.for.the.column.test.${stamp}@subdomain.example.test`;
const writer = `writer.${stamp}@example.test`;
const customers = [1, 2, 3].map((i) => `customer${i}.${stamp}@example.test`);

const user = (args: string[]) => runCli(['user', ...args, '--data-dir', dir]);

async function withApp<T>(fn: (app: Awaited<ReturnType<typeof createAppContext>>) => Promise<T>): Promise<T> {
  const config = loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, LOG_LEVEL: 'silent' }, moduleEnv: moduleEnvNames(registry) });
  const app = await createAppContext(config, { logger: createLogger('silent'), moduleRegistry: registry, coreRoutes });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

beforeAll(async () => {
  dir = tempDir();
  const init = await runCli(['init', '--yes', '--data-dir', dir]);
  expect(init.code, init.stderr).toBe(0);
  for (const [email, type] of [[writer, 'writer'], [long, 'customer'], ...customers.map((c) => [c, 'customer'])]) {
    const r = await user(['create', '--email', email, '--type', type]);
    expect(r.code, r.stderr).toBe(0);
  }
}, 120_000);
afterAll(removeTempDirs);

describe('gatehouse user list', () => {
  it('when run for people, then each line fits 80 columns, a long email is cut with … and the count closes it', async () => {
    const r = await user(['list']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^email\s+type\s+status\s+created$/);
    expect(lines.some((l) => /^a\.rather\.long\.mailbox.*…\s+customer\s+active\s+\d{4}-\d\d-\d\d$/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe('5 users of 5');
  });

  it('when filtered by --type, --search and --limit, then --json answers those users and a cursor for the next page', async () => {
    const writers = json(await user(['list', '--type', 'writer', '--json']));
    expect(writers.users.map((u: { email: string }) => u.email)).toEqual([writer]);
    expect(writers.users[0]).toMatchObject({ user_type: 'writer', disabled: false, disabled_at: null });

    const first = json(await user(['list', '--search', 'customer', '--limit', '2', '--json']));
    expect(first).toMatchObject({ success: true, total: 3, total_exact: true });
    expect(first.users).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const next = json(await user(['list', '--search', 'customer', '--limit', '2', '--cursor', first.next_cursor, '--json']));
    expect(next.users).toHaveLength(1);
    const seen = [...first.users, ...next.users].map((u: { email: string }) => u.email).sort();
    expect(seen).toEqual([...customers].sort());
  });

  it.each([
    [['list', '--type', 'emperor'], '--type'],
    [['list', '--limit', '0'], '--limit'],
    [['list', '--limit', '101'], '--limit'],
    [['list', '--cursor', 'AAAA'], '--cursor'],
    [['show'], 'missing required argument'],
    [['disable'], 'missing required argument'],
  ])('when run as user %j, then it exits 2 and says what is wrong', async (args, says) => {
    const r = await user(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(says);
    expect(r.stdout).toBe('');
  });
});

describe('gatehouse user show', () => {
  it('when given an email or an id, then it shows the same user; --json gives the API object', async () => {
    const byEmail = await user(['show', writer.toUpperCase()]);
    expect(byEmail.code, byEmail.stderr).toBe(0);
    expect(byEmail.stdout).toContain(`${writer}  (writer, active)`);
    const id = /id:\s+(\S+)/.exec(byEmail.stdout)![1];
    const byId = json(await user(['show', id, '--json']));
    expect(byId).toMatchObject({ success: true, user: { id, email: writer, user_type: 'writer', disabled: false }, active_sessions: 0 });
    expect(byId.user).not.toHaveProperty('password_hash');
  });

  it('when no such user exists, then it exits 1 naming it (email) or the list (id)', async () => {
    const email = await user(['show', 'nobody@example.test']);
    expect(email.code).toBe(1);
    expect(email.stderr).toContain('no user with the email nobody@example.test');
    const id = await user(['show', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(id.code).toBe(1);
    expect(json(id)).toMatchObject({ success: false });
    expect(id.stderr).toContain('gatehouse user list');
  });
});

describe('gatehouse user disable / enable', () => {
  it("when a user with sessions is disabled, then the sessions are revoked and the admin API's events are written; enable undoes it", async () => {
    const target = customers[0];
    const userId = await withApp(async (app) => {
      const u = (await app.repos.users.findByEmail(target))!;
      await app.services.sessions.create(u.id);
      await app.services.sessions.create(u.id);
      return u.id;
    });
    expect(json(await user(['show', target, '--json'])).active_sessions).toBe(2);

    const off = await user(['disable', target]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain(`Disabled ${target}`);
    const shown = json(await user(['show', userId, '--json']));
    expect(shown).toMatchObject({ user: { disabled: true, disabled_at: expect.any(String) }, active_sessions: 0 });
    expect((await user(['list', '--search', 'customer1'])).stdout).toMatch(/customer1\.\S+\s+customer\s+disabled/);

    const again = json(await user(['disable', target, '--json']));
    expect(again).toMatchObject({ success: true, changed: false });

    const on = json(await user(['enable', target, '--json']));
    expect(on).toMatchObject({ success: true, changed: true, user: { disabled: false, disabled_at: null } });

    const events = json(await runCli(['audit', 'list', '--user', userId, '--json', '--data-dir', dir])).events as {
      type: string;
      actor: unknown;
      details: Record<string, unknown>;
    }[];
    expect(events[0].type).toBe('user.enabled');
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['user.disabled', 'session.revoked']));
    expect(events.find((e) => e.type === 'user.disabled')).toMatchObject({ actor: { via: 'cli' } });
    expect(events.find((e) => e.type === 'session.revoked')).toMatchObject({
      actor: { via: 'cli' },
      details: { by: 'cli', count: 2, reason: 'user.disabled' },
    });
  });

  it('when the user does not exist, then it exits 1', async () => {
    const r = await user(['disable', 'ghost@example.test']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no user with the email ghost@example.test');
  });
});
