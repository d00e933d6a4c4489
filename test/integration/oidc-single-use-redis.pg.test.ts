import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreAdapter } from '../../src/oidc/adapter.js';
import { raceConsumes } from '../helpers/oidc-race.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/** The Redis half of the OpenID adapter (codes live there when instances share Redis): consume is a SET NX marker. */
describe("the Redis adapter's consume is a compare-and-set", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('when one code is consumed by 20 at once, exactly one consume wins; a save makes it unconsumed again', async () => {
    await raceConsumes(
      createStoreAdapter(t.app.store!, 'AuthorizationCode', () => new Date()),
      20,
    );
  });

  it('when one jti is claimed by 20 at once (ReplayDetection), exactly one claim wins and the winner is what is read back', async () => {
    const seen = createStoreAdapter(t.app.store!, 'ReplayDetection', () => new Date());
    const id = `jti-${randomUUID()}`;
    const claims = await Promise.all(Array.from({ length: 20 }, (_, n) => seen.claim!(id, { n }, 60)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await seen.find(id)).toEqual({ n: claims.indexOf(true) });
  });
});
