import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import type { TestApp } from '../helpers/test-app.js';
import { authorizationRequest, signedInJar, startProviderWithClient } from '../helpers/oidc-rp.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis-server.js';

/**
 * The OpenID provider's short-lived artefacts (interactions, codes) live only in Redis on this tier
 * (src/oidc/adapter.ts, createStoreAdapter). A Redis fault must not lose them silently, as the cache's
 * "down means a miss" would: a slow command leaves a sign-in in progress intact, and Redis gone is a
 * 503 with Retry-After, not a "not found" 400 or a 500. Redis is a server of the test's own.
 */

const REDIRECT = 'http://127.0.0.1:9999/cb';
let redis: OwnRedis;
let op: Awaited<ReturnType<typeof startProviderWithClient>>;
let t: TestApp;
let front: { url: string };

beforeAll(async () => {
  redis = await startOwnRedis();
  op = await startProviderWithClient({ REDIS_URL: redis.url, REDIS_PREFIX: `gho:${redis.port}:` }, REDIRECT);
  ({ t, front } = op);
}, 60_000);
afterAll(async () => {
  await op?.close();
  await redis?.close();
});

const rpConfig = () => op.rp();

describe('the OpenID provider when Redis falters', () => {
  it('when one Redis command was slow (the shared cache skips Redis for a while), then a sign-in in progress finds its interaction and its code', async () => {
    const { user, jar } = await signedInJar(t, front.url);
    const config = await rpConfig();
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid email' });
    const first = await jar.fetch(url);
    expect(first.status).toBe(303);
    const interaction = new URL(first.headers.get('location')!, url).toString();
    expect(interaction).toMatch(/\/oidc\/interaction\/[\w-]+$/);

    // As after a command that took longer than REDIS_COMMAND_TIMEOUT_MS: the cache reads misses for 2 s.
    t.app.redisHealth!.failed('a slow command', new Error('no answer within 500 ms'));
    expect(await t.app.cache.get('anything')).toBeNull();
    expect(t.app.redisHealth!.available()).toBe(false);

    const { final, res } = await jar.follow(interaction);
    expect(final.startsWith(REDIRECT), `${res.status} ${final} ${await res.text()}`).toBe(true);
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()!.sub).toBe(user.id);
  });

  it('when Redis is gone, then authorization and interactions answer 503 with Retry-After in the JSON error shape; once it is back, a new sign-in works', async () => {
    const { jar } = await signedInJar(t, front.url);
    const config = await rpConfig();
    const { url } = await authorizationRequest(config, REDIRECT, { scope: 'openid email' });
    const first = await jar.fetch(url);
    expect(first.status).toBe(303);
    const interaction = new URL(first.headers.get('location')!, url).toString();

    await redis.kill();
    try {
      for (const target of [url, interaction]) {
        const res = await jar.fetch(target, { headers: { accept: 'text/html' } });
        const text = await res.text();
        expect(res.status, `${target}: ${text}`).toBe(503);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(JSON.parse(text)).toMatchObject({ success: false, code: 'SERVICE_UNAVAILABLE' });
      }
    } finally {
      await redis.start();
    }
    await expect.poll(async () => (await fetch(`${t.url}/ready`)).status, { timeout: 15_000 }).toBe(200);
    // Redis restarted empty: the old interaction is gone (a clear 400 naming it), and a new sign-in works.
    const gone = await jar.fetch(interaction);
    expect(gone.status).toBe(400);
    expect(await gone.json()).toMatchObject({ success: false, code: 'INVALID_REQUEST', error: expect.stringMatching(/interaction/i) });
    const again = await authorizationRequest(config, REDIRECT, { scope: 'openid email' });
    const { final } = await jar.follow(again.url);
    expect(final.startsWith(REDIRECT), final).toBe(true);
  });
});
