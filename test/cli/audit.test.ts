import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../modules/index.js';
import { createAppContext } from '../../src/app-context.js';
import { withAuditScope } from '../../src/audit/audit-scope.js';
import { loadConfig } from '../../src/config/load-config.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { createLogger } from '../../src/log/logger.js';
import { moduleEnvNames } from '../../src/modules/module-env.js';
import { eventAt } from '../helpers/audit-events.js';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

const EXPORTED = 450;
let dir: string;
let userId: string;
let otherId: string;
const email = `audited.${Date.now()}@example.test`;
const adminEmail = `ops.${Date.now() % 1000}@example.test`;
const otherEmail = `ann.${Date.now() % 1000}@example.test`;

/**
 * A data dir made by `gatehouse init`, with events written in-process through the audit service (the
 * flows that write them are instrumented elsewhere): three about one user, EXPORTED more from 2025.
 */
beforeAll(async () => {
  dir = tempDir();
  const init = await runCli(['init', '--yes', '--data-dir', dir]);
  expect(init.code, init.stderr).toBe(0);
  const config = loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, LOG_LEVEL: 'silent' }, moduleEnv: moduleEnvNames(registry) });
  const app = await createAppContext(config, { logger: createLogger('silent'), moduleRegistry: registry, coreRoutes });
  try {
    userId = (await app.repos.users.create({ id: randomUUID(), email, name: 'Audited', user_type: 'customer', is_verified: true })).id;
    const scope = { actor: { id: userId, user_type: 'customer' }, ip: '203.0.113.7', userAgent: 'CliTest/1', requestId: 'req-cli' };
    await withAuditScope(scope, async () => {
      await app.services.audit.record({ type: 'sign_in.succeeded', userId, details: { method: 'password' } });
      await app.services.audit.record({ type: 'sign_in.failed', outcome: 'failure', userId, details: { reason: 'bad_password' } });
      await app.services.audit.record({ type: 'password.changed', userId });
    });
    // An admin acting on another user, in 2024 (outside the windows below).
    const adminId = (await app.repos.users.create({ id: randomUUID(), email: adminEmail, user_type: 'admin', is_verified: true })).id;
    otherId = (await app.repos.users.create({ id: randomUUID(), email: otherEmail, user_type: 'customer', is_verified: true })).id;
    await app.repos.audit.insert(
      eventAt(new Date('2024-06-01T12:00:00Z'), {
        type: 'user.updated',
        user_id: otherId,
        actor: { id: adminId, user_type: 'admin' },
        ip: '2001:db8:85a3::8a2e:370:7334',
        details: { fields: ['name', 'last_name', 'user_name', 'phone', 'lang', 'metadata', 'tmz', 'dob', 'display_name'] },
      }),
    );
    const start = Date.parse('2025-03-01T00:00:00Z');
    for (let i = 0; i < EXPORTED; i++) {
      const at = new Date(start + i * 60_000);
      await app.repos.audit.insert(eventAt(at, { type: 'sign_out', details: { i } }));
    }
  } finally {
    await app.close();
  }
}, 120_000);
afterAll(removeTempDirs);

const audit = (args: string[]) => runCli(['audit', ...args, '--data-dir', dir]);

describe('gatehouse audit list', () => {
  it('when filtered by user (email or id), type family and limit, then --json answers those events and a cursor for the next page', async () => {
    const byEmail = await audit(['list', '--user', email.toUpperCase(), '--json']);
    expect(byEmail.code, byEmail.stderr).toBe(0);
    const doc = json(byEmail);
    expect(doc.success).toBe(true);
    expect(doc.events.map((e: { type: string }) => e.type)).toEqual(['password.changed', 'sign_in.failed', 'sign_in.succeeded']);
    expect(doc.events[2]).toMatchObject({ user_id: userId, actor: { id: userId, user_type: 'customer' }, ip: '203.0.113.7', request_id: 'req-cli' });
    expect(doc.next_cursor).toBeNull();

    const family = json(await audit(['list', '--user', userId, '--type', 'sign_in.*', '--limit', '1', '--json']));
    expect(family.events.map((e: { type: string }) => e.type)).toEqual(['sign_in.failed']);
    const next = json(await audit(['list', '--user', userId, '--type', 'sign_in.*', '--limit', '1', '--cursor', family.next_cursor, '--json']));
    expect(next.events.map((e: { type: string }) => e.type)).toEqual(['sign_in.succeeded']);

    const window = json(await audit(['list', '--since', '2025-03-01T00:10:00Z', '--until', '2025-03-01T00:13:00Z', '--json']));
    expect(window.events.map((e: { details: { i: number } }) => e.details.i)).toEqual([12, 11, 10]);
  });

  it('when run for people, then each event is two lines within 80 columns naming the user by email, and who acted', async () => {
    const r = await audit(['list', '--user', userId]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(lines).toHaveLength(7);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}password\.changed\s+success {2}203\.0\.113\.7$/);
    expect(lines[1]).toBe(`    ${email}  by self`);
    expect(lines[2]).toMatch(/sign_in\.failed\s+failure {2}203\.0\.113\.7$/);
    expect(lines[3]).toBe(`    ${email}  by self  {"reason":"bad_password"}`);
    expect(lines[lines.length - 1]).toBe('3 events');
    expect(r.stdout).not.toContain(userId);
  });

  it('when another user acted, then the line names them by type and email; --json maps the ids it names to emails', async () => {
    const r = await audit(['list', '--user', otherId]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
    // The details are what gets cut (--json has them whole).
    expect(lines[0]).toBe('2024-06-01 12:00:00Z  user.updated  success  2001:db8:85a3::8a2e:370:7334');
    expect(lines[1]).toMatch(new RegExp(`^    ${otherEmail.replace(/\./g, '\\.')}  by admin ${adminEmail.replace(/\./g, '\\.')}  \\{"fields":\\["name",.*…$`));
    const doc = json(await audit(['list', '--user', otherId, '--json']));
    expect(Object.values(doc.users).sort()).toEqual([adminEmail, otherEmail].sort());
    expect(doc.users[otherId]).toBe(otherEmail);
  });

  it.each([
    [['list', '--since', 'yesterday'], '--since'],
    [['list', '--limit', '0'], '--limit'],
    [['list', '--limit', '201'], '--limit'],
    [['list', '--type', 'made.up'], 'made.up'],
    [['list', '--cursor', 'AAAA'], '--cursor'],
    [['list', '--since', '2025-02-01', '--until', '2025-01-01'], '--until'],
    [['list', '--colour'], 'unknown option'],
    [['export'], '--since'],
    [['export', '--since', '2025-13-01'], '--since'],
  ])('when run as audit %j, then it exits 2 and says what is wrong', async (args, says) => {
    const r = await audit(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(says);
    expect(r.stdout).toBe('');
  });

  it('when the user by email does not exist, then it exits 1 naming it', async () => {
    const r = await audit(['list', '--user', 'nobody@example.test']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no user with the email nobody@example.test');
  });
});

describe('gatehouse audit export', () => {
  it('when a window holds several pages of events, then each is one JSON line on stdout, newest first, with progress and the count on stderr', async () => {
    const r = await audit(['export', '--since', '2025-01-01', '--until', '2025-12-31']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(EXPORTED);
    const events = lines.map((l) => JSON.parse(l) as { type: string; details: { i: number } });
    expect(events.map((e) => e.details.i)).toEqual([...Array(EXPORTED).keys()].reverse());
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['sign_out']));
    expect(r.stderr).toContain(`${EXPORTED} events exported`);

    const recent = await audit(['export', '--since', new Date(Date.now() - 3_600_000).toISOString()]);
    expect(recent.code, recent.stderr).toBe(0);
    expect(recent.stdout.trim().split('\n')).toHaveLength(3);
  });
});
