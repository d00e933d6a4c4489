import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createDbAdapter, withHashedIds } from '../../src/oidc/adapter.js';
import { BACKEND } from '../helpers/backend.js';
import { raceConsumes } from '../helpers/oidc-race.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * The OpenID provider's database adapter (src/oidc/adapter.ts). oidc-provider saves a session on most
 * requests of its browser, so two requests of one browser (two tabs, a prefetch) save the same id at once.
 */
describe(`the OpenID provider's database adapter (${BACKEND})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('when one id is saved by many at once, then every save succeeds and one of them is what is read back', async () => {
    const sessions = createDbAdapter(t.app.sequelize, 'Session', () => new Date());
    for (let round = 0; round < 5; round++) {
      const id = `concurrent-${round}`;
      // uids of this round only: a record of an earlier round must not answer findByUid here.
      const uid = (n: number) => `r${round}-u${n}`;
      await sessions.upsert(id, { uid: uid(0), accountId: 'a0', n: -1 }, 600);
      const saves = await Promise.allSettled(Array.from({ length: 12 }, (_, n) => sessions.upsert(id, { uid: uid(n), accountId: `a${n}`, n }, 600)));
      expect(saves.filter((s) => s.status === 'rejected')).toEqual([]);
      const found = (await sessions.find(id)) as { n: number; uid: string };
      expect(found.n).toBeGreaterThanOrEqual(0);
      expect(found.uid).toBe(uid(found.n));
      // The indexed columns follow the payload: findByUid finds it under the last save's uid only.
      expect(await sessions.findByUid(found.uid)).toMatchObject({ n: found.n });
      if (found.n !== 0) expect(await sessions.findByUid(uid(0))).toBeUndefined();
    }
  });

  it('when an artefact that was consumed is saved again, then it is not consumed (the whole payload is replaced, as oidc-provider expects)', async () => {
    const codes = createDbAdapter(t.app.sequelize, 'AuthorizationCode', () => new Date());
    await codes.upsert('code-1', { grantId: 'g1' }, 60);
    await codes.consume('code-1');
    expect(await codes.find('code-1')).toMatchObject({ consumed: expect.any(Number) });
    await codes.upsert('code-1', { grantId: 'g2' }, 60);
    const again = await codes.find('code-1');
    expect(again).toEqual({ grantId: 'g2' });
    await codes.revokeByGrantId('g1');
    expect(await codes.find('code-1')).toEqual({ grantId: 'g2' });
    await codes.revokeByGrantId('g2');
    expect(await codes.find('code-1')).toBeUndefined();
  });

  it('when an artefact is saved with no lifetime, then it does not expire; with one that has run out, it is not found', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const grants = createDbAdapter(t.app.sequelize, 'Grant', () => now);
    await grants.upsert('grant-forever', { accountId: 'a' }, 0);
    await grants.upsert('grant-brief', { accountId: 'a' }, 5);
    now = new Date('2030-01-01T00:00:00Z');
    expect(await grants.find('grant-forever')).toEqual({ accountId: 'a' });
    expect(await grants.find('grant-brief')).toBeUndefined();
  });

  it('when one code is consumed by 20 at once, exactly one consume wins (a compare-and-set: oidc-single-use.test.ts races it through the provider)', async () => {
    await raceConsumes(
      createDbAdapter(t.app.sequelize, 'AuthorizationCode', () => new Date()),
      20,
    );
  });

  it('claim saves an id once among many at once, takes over an expired row and never a live one (ReplayDetection)', async () => {
    let now = new Date();
    const seen = createDbAdapter(t.app.sequelize, 'ReplayDetection', () => now);
    const claims = await Promise.all(Array.from({ length: 12 }, (_, n) => seen.claim!('jti-1', { n }, 60)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await seen.claim!('jti-1', { again: true }, 60)).toBe(false);
    now = new Date(now.getTime() + 61_000);
    expect(await seen.claim!('jti-1', { later: true }, 60)).toBe(true);
    expect(await seen.find('jti-1')).toEqual({ later: true });
  });

  it('withHashedIds keys a row by the SHA-256 of its id and keeps the id out of the payload; a row saved in clear before is still found, consumed once and destroyed', async () => {
    const raw = createDbAdapter(t.app.sequelize, 'RefreshToken', () => new Date());
    const tokens = withHashedIds(raw);
    const hash = (id: string) => createHash('sha256').update(id).digest('hex');
    await tokens.upsert('rt-secret-1', { jti: 'rt-secret-1', grantId: 'gh1', kind: 'RefreshToken' }, 600);
    expect(await raw.find('rt-secret-1')).toBeUndefined();
    expect(await raw.find(hash('rt-secret-1'))).toEqual({ grantId: 'gh1', kind: 'RefreshToken' });
    expect(await tokens.find('rt-secret-1')).toEqual({ jti: 'rt-secret-1', grantId: 'gh1', kind: 'RefreshToken' });
    await raceConsumes(tokens, 10);
    const wins = (id: string) => Promise.all(Array.from({ length: 10 }, () => tokens.consume(id))).then((w) => w.filter(Boolean).length);
    expect(await wins('rt-secret-1')).toBe(1);
    // Saved in clear by an earlier version: found by its id, consumed once among many, then destroyed.
    await raw.upsert('rt-legacy', { jti: 'rt-legacy', grantId: 'gh2' }, 600);
    expect(await tokens.find('rt-legacy')).toEqual({ jti: 'rt-legacy', grantId: 'gh2' });
    expect(await wins('rt-legacy')).toBe(1);
    await tokens.destroy('rt-legacy');
    await tokens.destroy('rt-secret-1');
    expect(await tokens.find('rt-legacy')).toBeUndefined();
    expect(await tokens.find('rt-secret-1')).toBeUndefined();
  });
});
