import { randomUUID } from 'node:crypto';
import type { Model, ModelStatic, Sequelize } from 'sequelize';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { coreMigrations } from '../../src/data/migrations/index.js';
import { createMigrator } from '../../src/data/migrator.js';
import { defineSystemModels } from '../../src/data/models/system.models.js';
import { createAuthTokenRepository } from '../../src/data/repositories/auth-token-repository.js';
import { createUserRepository } from '../../src/data/repositories/user-repository.js';
import { createSequelize } from '../../src/data/sequelize.js';
import { sha256 } from '../../src/services/security/tokens.js';
import { createTokenService, MAX_CODE_ATTEMPTS, type TokenService } from '../../src/services/token-service.js';

// A real (in-memory SQLite) database: the atomic single-use guarantees live in SQL, so a fake would prove nothing.
let sequelize: Sequelize;
let AuthToken: ModelStatic<Model>;
let now: Date;
let tokens: TokenService;
let userId: string;
const email = 'ana@example.test';

beforeAll(async () => {
  sequelize = await createSequelize({ databaseUrl: 'sqlite::memory:', dataDirAbs: '/tmp' });
  await createMigrator(sequelize, () => [coreMigrations]).apply();
  AuthToken = defineSystemModels(sequelize).AuthToken;
});

afterAll(async () => {
  await sequelize.close();
});

beforeEach(async () => {
  now = new Date('2026-11-21T10:00:00Z');
  userId = randomUUID();
  await createUserRepository(sequelize).create({ id: userId, email: `${userId}@example.test` });
  tokens = createTokenService({ repo: createAuthTokenRepository(AuthToken), clock: () => now });
});

const issue = (over: Partial<Parameters<TokenService['issue']>[0]> = {}) =>
  tokens.issue({ kind: 'password_reset', userId, identifier: `${userId}:${email}`, ttlSec: 3600, ...over });

describe('token service', () => {
  it('when a token is issued, then only its SHA-256 is stored and it can be used exactly once', async () => {
    const t = await issue();
    expect(t.token).toMatch(/^rst_[A-Za-z0-9_-]{43}$/);
    const row = (await AuthToken.findByPk(t.id))!.get({ plain: true }) as Record<string, unknown>;
    expect(row.token_hash).toBe(sha256(t.token));
    expect(JSON.stringify(row)).not.toContain(t.token);

    expect((await tokens.consume('password_reset', t.token))?.id).toBe(t.id);
    expect(await tokens.consume('password_reset', t.token)).toBeNull();
    expect(await tokens.peek('password_reset', t.token)).toBeNull();
  });

  it('when a token is presented for another purpose, then it is refused and stays usable', async () => {
    const t = await issue();
    expect(await tokens.consume('login', t.token)).toBeNull();
    expect(await tokens.consume('verify_email', t.token)).toBeNull();
    expect(await tokens.peek('password_reset', t.token)).not.toBeNull();
  });

  it('when the lifetime has passed, then the token is refused', async () => {
    const t = await issue({ ttlSec: 300 });
    now = new Date(now.getTime() + 299_000);
    expect(await tokens.peek('password_reset', t.token)).not.toBeNull();
    now = new Date(now.getTime() + 1_000);
    expect(await tokens.consume('password_reset', t.token)).toBeNull();
  });

  it('when a newer token is issued for the same address, then the older one is void', async () => {
    const older = await issue();
    const newer = await issue();
    expect(await tokens.consume('password_reset', older.token)).toBeNull();
    expect((await tokens.consume('password_reset', newer.token))?.id).toBe(newer.id);
  });

  it('when the same token is used concurrently, then exactly one use succeeds', async () => {
    const t = await issue();
    const results = await Promise.all(Array.from({ length: 8 }, () => tokens.consume('password_reset', t.token)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('when the right code is given with the token id, then the token is used up', async () => {
    const t = await issue({ kind: 'login', withCode: true });
    expect(t.code).toMatch(/^\d{6}$/);
    expect((await tokens.consumeCode('login', { id: t.id }, t.code!))?.id).toBe(t.id);
    expect(await tokens.consumeCode('login', { id: t.id }, t.code!)).toBeNull();
    expect(await tokens.consume('login', t.token)).toBeNull();
  });

  it('when a code is given with the address, then it is checked against the newest token only', async () => {
    const identifier = `${userId}:${email}`;
    const older = await issue({ kind: 'login', withCode: true });
    const newer = await issue({ kind: 'login', withCode: true });
    if (older.code !== newer.code) expect(await tokens.consumeCode('login', { identifier }, older.code!)).toBeNull();
    expect((await tokens.consumeCode('login', { identifier }, newer.code!))?.id).toBe(newer.id);
  });

  it(`when ${MAX_CODE_ATTEMPTS} wrong codes are tried, then even the right code and the link are refused`, async () => {
    const t = await issue({ kind: 'login', withCode: true });
    const wrong = t.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) expect(await tokens.consumeCode('login', { id: t.id }, wrong)).toBeNull();
    expect(await tokens.consumeCode('login', { id: t.id }, t.code!)).toBeNull();
    expect(await tokens.consume('login', t.token)).toBeNull();
  });

  it('when fewer wrong codes than the limit are tried, then the right code still works', async () => {
    const t = await issue({ kind: 'login', withCode: true });
    const wrong = t.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < MAX_CODE_ATTEMPTS - 1; i++) await tokens.consumeCode('login', { id: t.id }, wrong);
    expect((await tokens.consumeCode('login', { id: t.id }, t.code!))?.id).toBe(t.id);
  });

  it('when a token has no code, then no code opens it', async () => {
    const t = await issue({ kind: 'login' });
    for (const code of ['000000', '123456']) expect(await tokens.consumeCode('login', { id: t.id }, code)).toBeNull();
    expect(await tokens.peek('login', t.token)).not.toBeNull();
  });

  it('when a code is tried for an unknown token id, then it costs the same write as a wrong code, on a row that never opens', async () => {
    const decoyAttempts = async () => ((await AuthToken.findByPk('00000000-0000-4000-8000-000000000000'))?.get('attempts') as number | undefined) ?? -1;
    expect(await tokens.consumeCode('login', { id: randomUUID() }, '123456')).toBeNull();
    const first = await decoyAttempts();
    expect(first).toBeGreaterThanOrEqual(0);
    expect(await tokens.consumeCode('login', { identifier: 'nobody@example.test' }, '123456')).toBeNull();
    expect(await decoyAttempts()).toBe(first + 1);
    const row = (await AuthToken.findByPk('00000000-0000-4000-8000-000000000000'))!.get({ plain: true }) as Record<string, unknown>;
    expect(row.used_at).not.toBeNull();
    expect(row.user_id).toBeNull();
  });

  it('when a token is issued with an id chosen beforehand, then it is stored under that id', async () => {
    const id = randomUUID();
    const t = await issue({ id, kind: 'login', withCode: true });
    expect(t.id).toBe(id);
    expect((await tokens.consumeCode('login', { id }, t.code!))?.id).toBe(id);
  });

  it("when a user's tokens are voided, then none of that kind works and other kinds do", async () => {
    const reset = await issue();
    const login = await issue({ kind: 'login' });
    expect(await tokens.voidForUser('password_reset', userId)).toBe(1);
    expect(await tokens.consume('password_reset', reset.token)).toBeNull();
    expect(await tokens.consume('login', login.token)).not.toBeNull();
  });
});

describe('keyed code hashes', () => {
  it('when a code key is set, then the stored code hash cannot be recomputed from the id and code alone', async () => {
    const keyed = createTokenService({ repo: createAuthTokenRepository(AuthToken), clock: () => now, codeKey: 'server-secret-0123456789abcdef' });
    const t = await keyed.issue({ kind: 'login', userId, identifier: `${userId}:keyed`, ttlSec: 600, withCode: true });
    const row = (await AuthToken.findByPk(t.id))!.get({ plain: true }) as { code_hash: string };
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.code_hash).not.toBe(sha256(`${t.id}:${t.code}`));
    // The same service (same key) still accepts the code; a service with another key does not.
    const other = createTokenService({ repo: createAuthTokenRepository(AuthToken), clock: () => now, codeKey: 'another-secret-0123456789abcd' });
    expect(await other.consumeCode('login', { id: t.id }, t.code!)).toBeNull();
    expect(await keyed.consumeCode('login', { id: t.id }, t.code!)).not.toBeNull();
  });
});
