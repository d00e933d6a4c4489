import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { captureLog, startTestApp, type TestApp } from '../helpers/test-app.js';

/** An operator sets a module's settings and limit budgets in the environment; they win over stored settings. */
let t: TestApp;
const log = captureLog();
beforeAll(async () => {
  t = await startTestApp({
    env: {
      LOG_LEVEL: 'warn',
      BLOG_COMMENTS_ENABLED: 'false',
      BLOG_FEED_ITEMS: 'lots',
      RATE_LIMIT_TWO_FACTOR_USER: '1/1m',
    },
    logTo: log.stream,
  });
  await t.app.modules.hub.install(['blog', 'two-factor'], { config: { blog: { comments_enabled: true, feed_title: 'Stored' } } });
});
afterAll(async () => {
  await t?.close();
});

describe(`module settings and limits from the environment (${BACKEND})`, () => {
  it('when a setting is in the environment, then it wins over the stored one; a value that does not fit is logged and the stored or default one stays', () => {
    const cfg = t.app.modules.config<{ comments_enabled: boolean; feed_title: string; feed_items: number }>('blog');
    expect(cfg).toMatchObject({ comments_enabled: false, feed_title: 'Stored', feed_items: 50 });
    expect(log.text()).toMatch(/BLOG_FEED_ITEMS=\\?"lots\\?" does not fit the setting blog\.feed_items/);
  });

  it("when a module's limit class is in the environment, then that budget applies even over the one the module passes", async () => {
    const ctx = t.app.modules.context('two-factor');
    expect((await ctx.limits.consume('two-factor-user', 'someone', { points: 100, durationSec: 60 })).allowed).toBe(true);
    expect((await ctx.limits.consume('two-factor-user', 'someone', { points: 100, durationSec: 60 })).allowed).toBe(false);
  });
});
