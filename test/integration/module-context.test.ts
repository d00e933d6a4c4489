import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataTypes, QueryTypes } from 'sequelize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry as shippedModules } from '../../modules/index.js';
import { defineRoute, type ModuleContext } from '../../src/module-api.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { makeSession, makeUser } from '../helpers/factories.js';
import { mailTo } from './flows-helpers.js';
import { createTable, testModule } from './module-helpers.js';

const ID = 'test-ctx';
const { t, smtp: sink } = appWithMail();
let ctx: ModuleContext;
let emailDir: string;

beforeAll(async () => {
  emailDir = mkdtempSync(path.join(os.tmpdir(), 'gh-module-mail-'));
  mkdirSync(path.join(emailDir, 'en'));
  writeFileSync(path.join(emailDir, 'en', 'strings.json'), JSON.stringify({ subjects: { welcome: 'Welcome to {{productName}}, {{name}}' } }));
  writeFileSync(path.join(emailDir, 'en', 'welcome.html'), '<p>Hello {{name}}, your code is {{code}}.</p>');
  writeFileSync(path.join(emailDir, 'en', 'welcome.txt'), 'Hello {{name}}, your code is {{code}}.');
  const mod = testModule(ID, {
    migrations: [createTable('20261124-0001-create-rows', 'test_ctx_rows')],
    tables: ['test_ctx_rows'],
    emails: [{ name: 'welcome', description: 'greets a user', requires: ['code'] }],
    emailDir,
    rateLimits: [{ name: 'test-ctx-tries', points: 2, durationSec: 60, description: 'tries' }],
    errorCodes: [{ code: 'TEST_CTX_NOPE', status: 400, description: 'nope' }],
    routes: [
      defineRoute({
        method: 'get',
        path: '/api/v1/test-ctx/me',
        auth: 'session',
        module: ID,
        // auth is narrowed by the mode: no assertion needed.
        handler: ({ auth, ctx: c }) => ({ success: true, id: auth.user.id, module: c.id }),
      }),
      defineRoute({
        method: 'get',
        path: '/api/v1/test-ctx/maybe',
        auth: 'optional-session',
        module: ID,
        handler: ({ auth }) => ({ success: true, user: auth.user?.id ?? null }),
      }),
    ],
  });
  await t.app.modules.setRegistry([...shippedModules, mod]);
  await t.app.modules.hub.install([ID]);
  ctx = t.app.modules.context(ID);
});
afterAll(async () => {
  rmSync(emailDir, { recursive: true, force: true });
});

describe('ModuleContext', () => {
  it('when the module reaches for its own table, then it gets a model; any other table is refused', async () => {
    const Rows = ctx.db.model('TestCtxRow', 'test_ctx_rows', { id: { type: DataTypes.STRING(36), primaryKey: true }, label: DataTypes.STRING(50) });
    await ctx.db.transaction(async (tx) => {
      await Rows.create({ id: 'r1', label: 'one' }, { transaction: tx });
    });
    expect((await Rows.findAll()).map((r) => r.get('label'))).toEqual(['one']);
    expect(() => ctx.db.model('Sneaky', 'sessions', { id: { type: DataTypes.STRING(36), primaryKey: true } })).toThrow(/does not own table sessions/);
  });

  it('when the module runs SQL, then only statements on its own tables run, inside its unit of work', async () => {
    await ctx.db.transaction(async (tx) => {
      await ctx.db.exec('INSERT INTO test_ctx_rows (id, label) VALUES (?, ?)', ['r2', 'two'], { tx });
      await ctx.db.exec('UPDATE test_ctx_rows SET label = ? WHERE id = ?', ['two!', 'r2'], { tx });
    });
    await expect(
      ctx.db.transaction(async (tx) => {
        await ctx.db.exec('INSERT INTO test_ctx_rows (id, label) VALUES (?, ?)', ['r3', 'gone'], { tx });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await ctx.db.select<{ label: string }>('SELECT label FROM test_ctx_rows WHERE id IN (?, ?) ORDER BY id', ['r2', 'r3'])).toEqual([{ label: 'two!' }]);
    await expect(ctx.db.select('SELECT r.id FROM test_ctx_rows r JOIN users u ON u.id = r.id')).rejects.toThrow(/does not own table users/);
    await expect(ctx.db.select('SELECT token_hash FROM sessions')).rejects.toThrow(/does not own table sessions/);
    await expect(ctx.db.exec('UPDATE users SET name = ?', ['x'])).rejects.toThrow(/does not own table users/);
    await expect(ctx.db.exec('INSERT INTO users(id) VALUES (?)', ['x'])).rejects.toThrow(/does not own table users/);
    await expect(ctx.db.exec('DELETE FROM sessions')).rejects.toThrow(/does not own table sessions/);
  });

  it('when the module reaches past its tables (comma join, quoted name, comment, subquery, CTE, DDL), then nothing runs and core tables stay', async () => {
    const [before] = await t.app.sequelize.query('SELECT COUNT(*) AS n FROM users', { type: QueryTypes.SELECT });
    const refused = [
      'SELECT u.email FROM test_ctx_rows r, users u',
      'SELECT * FROM "users"',
      'SELECT * FROM /* */users',
      'SELECT * FROM -- \n users',
      'SELECT (SELECT email FROM users LIMIT 1) AS e FROM test_ctx_rows',
      'WITH x AS (SELECT * FROM users) SELECT * FROM x',
      'SELECT id FROM test_ctx_rows UNION SELECT id FROM users',
    ];
    for (const sql of refused) await expect(ctx.db.select(sql), sql).rejects.toThrow(/module test-ctx/);
    for (const sql of [
      'DROP TABLE users',
      'TRUNCATE users',
      'ALTER TABLE users ADD COLUMN stolen TEXT',
      'DROP TABLE test_ctx_rows',
      'SELECT 1 FROM test_ctx_rows; DELETE FROM users',
    ]) {
      await expect(ctx.db.exec(sql), sql).rejects.toThrow(/module test-ctx/);
    }
    const [after] = await t.app.sequelize.query('SELECT COUNT(*) AS n FROM users', { type: QueryTypes.SELECT });
    expect(after).toEqual(before);
    // What a module really writes still runs: an upsert and a CTE over its own table.
    await ctx.db.exec('INSERT INTO test_ctx_rows (id, label) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', ['r9', 'nine']);
    await ctx.db.exec('INSERT INTO test_ctx_rows (id, label) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', ['r9', 'again']);
    expect(await ctx.db.select('WITH mine AS (SELECT id, label FROM test_ctx_rows WHERE id = ?) SELECT label FROM mine', ['r9'])).toEqual([{ label: 'nine' }]);
  });

  it('when the module hashes a secret, then it verifies with the server hasher and a wrong or missing one fails', async () => {
    const hash = await ctx.passwords.hash('post secret');
    expect(hash).not.toContain('post secret');
    expect(await ctx.passwords.verify('post secret', hash)).toBe(true);
    expect(await ctx.passwords.verify('other secret', hash)).toBe(false);
    expect(await ctx.passwords.verify('post secret', null)).toBe(false);
  });

  it('when a unit of work fails, then the user patch inside it is rolled back and nothing is announced', async () => {
    const user = await makeUser(t);
    const seen: string[] = [];
    const off = t.app.hooks.on(
      'user.updated',
      ({ user: u }) => void seen.push(u.id),
      'test',
      ({ user: u }) => u.id === user.id,
    );
    try {
      await expect(
        ctx.db.transaction(async (tx) => {
          await ctx.users.patch(user.id, { name: 'Rolled Back' }, { tx });
          throw new Error('later step failed');
        }),
      ).rejects.toThrow('later step failed');
      expect((await ctx.users.find(user.id))?.name).toBe(user.name);
      expect(seen).toEqual([]);
      await ctx.db.transaction((tx) => ctx.users.patch(user.id, { name: 'Kept' }, { tx }));
      expect((await ctx.users.find(user.id))?.name).toBe('Kept');
      expect(seen).toEqual([user.id]);
    } finally {
      off();
    }
  });

  it('when a module patches email, password or role, then it is refused: those have their own flows', async () => {
    const user = await makeUser(t);
    expect(() => ctx.users.patch(user.id, { user_type: 'superadmin' })).toThrow(/may not write user_type/);
    expect(() => ctx.users.patch(user.id, { password_hash: 'x', email: 'x@y.test' })).toThrow(/password_hash, email/);
  });

  it('when a module reads several users at once, then it gets the live ones in one read, deleted ones only when asked', async () => {
    const [a, b] = [await makeUser(t), await makeUser(t)];
    const gone = await makeUser(t, { deleted_at: new Date() });
    const ids = (users: { id: string }[]) => users.map((u) => u.id).sort();
    expect(ids(await ctx.users.findMany([a.id, b.id, gone.id, 'no-such-id', a.id]))).toEqual([a.id, b.id].sort());
    expect(ids(await ctx.users.findMany([a.id, gone.id], { includeDeleted: true }))).toEqual([a.id, gone.id].sort());
    expect(await ctx.users.findMany([])).toEqual([]);
  });

  it('when a secret is sealed, then it opens with the same purpose only and tampering is detected', () => {
    const sealed = ctx.keys.seal('JBSWY3DPEHPK3PXP', 'totp');
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(ctx.keys.open(sealed, 'totp')).toBe('JBSWY3DPEHPK3PXP');
    expect(() => ctx.keys.open(sealed, 'other')).toThrow();
    const [v, iv, tag, body] = sealed.split('.');
    const flipped = body.startsWith('A') ? `B${body.slice(1)}` : `A${body.slice(1)}`;
    expect(() => ctx.keys.open([v, iv, tag, flipped].join('.'), 'totp')).toThrow();
    expect(ctx.keys.derive('totp')).toHaveLength(32);
    expect(ctx.keys.derive('totp').equals(t.app.modules.context('privacy').keys.derive('totp'))).toBe(false);
  });

  it('when a declared limit class is spent, then check answers 429; an undeclared class is a bug', async () => {
    const key = `k-${Date.now()}`;
    await ctx.limits.check('test-ctx-tries', key);
    await ctx.limits.check('test-ctx-tries', key);
    await expect(ctx.limits.check('test-ctx-tries', key)).rejects.toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    await expect(ctx.limits.consume('login', key)).rejects.toThrow(/not declared/);
  });

  it("when the module mails, then its own template is rendered in core's layout and sent over SMTP", async () => {
    const user = await makeUser(t);
    await ctx.mail.send({ to: user.email, template: 'welcome', lang: 'pt-BR', data: { name: 'Ana', code: '123456' } });
    const mail = await mailTo(sink, user.email, /Welcome to/);
    expect(mail.subject).toBe('Welcome to Gatehouse, Ana');
    expect(mail.text).toContain('Hello Ana, your code is 123456.');
    await expect(ctx.mail.send({ to: user.email, template: 'welcome', data: { name: 'Ana' } })).rejects.toThrow(/needs data: code/);
    await expect(ctx.mail.send({ to: user.email, template: 'verify-email', data: {} })).rejects.toThrow(/Unknown email template/);
  });

  it('when its routes are called, then the handler gets the context and auth narrowed by mode', async () => {
    const { user, token } = await makeSession(t);
    expect((await t.request('GET', '/api/v1/test-ctx/me', { session: token })).body).toEqual({ success: true, id: user.id, module: ID });
    expect((await t.request('GET', '/api/v1/test-ctx/me')).status).toBe(401);
    expect((await t.request('GET', '/api/v1/test-ctx/maybe', { session: token })).body).toEqual({ success: true, user: user.id });
    expect((await t.request('GET', '/api/v1/test-ctx/maybe', { session: 'ses_not-a-session' })).body).toEqual({ success: true, user: null });
    expect((await t.request('GET', '/api/v1/test-ctx/maybe')).body).toEqual({ success: true, user: null });
  });

  it('when the API reference is read, then the module tag lists the error codes its manifest declares', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    expect(doc.tags).toContainEqual(expect.objectContaining({ name: ID, 'x-error-codes': [{ code: 'TEST_CTX_NOPE', status: 400, description: 'nope' }] }));
  });
});
