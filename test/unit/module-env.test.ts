import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { envLimit, envSettings, limitEnvName, moduleEnvNames, settingEnvName } from '../../src/modules/module-env.js';

const manifest = {
  id: 'post-types',
  config: z.object({
    enabled: z.boolean().default(true),
    feed_items: z.number().int().min(1).default(50),
    site_url: z.string().default(''),
    reactions: z.array(z.string()).default(['like']),
  }),
  rateLimits: [{ name: 'post-types-write', points: 5, durationSec: 60, description: 'writes' }],
};

describe('module settings from the environment', () => {
  it('when a module declares settings and limit classes, then their environment names are <MODULE>_<KEY> and RATE_LIMIT_<CLASS>', () => {
    expect(settingEnvName('post-types', 'fresh_cache_mode')).toBe('POST_TYPES_FRESH_CACHE_MODE');
    expect(limitEnvName('two-factor-user')).toBe('RATE_LIMIT_TWO_FACTOR_USER');
    expect(moduleEnvNames([manifest])).toEqual([
      'POST_TYPES_ENABLED',
      'POST_TYPES_FEED_ITEMS',
      'POST_TYPES_SITE_URL',
      'POST_TYPES_REACTIONS',
      'RATE_LIMIT_POST_TYPES_WRITE',
    ]);
  });

  it('when values are given as text, then each is read as its setting type; one that fits no reading is a problem and left out', () => {
    const { values, problems } = envSettings(manifest, {
      POST_TYPES_ENABLED: 'false',
      POST_TYPES_FEED_ITEMS: '20',
      POST_TYPES_SITE_URL: 'https://site.example',
      POST_TYPES_REACTIONS: 'like, love',
    });
    expect(values).toEqual({ enabled: false, feed_items: 20, site_url: 'https://site.example', reactions: ['like', 'love'] });
    expect(problems).toEqual([]);
    for (const [k, v] of [
      ['POST_TYPES_ENABLED', 'maybe'],
      ['POST_TYPES_FEED_ITEMS', '0'],
      ['POST_TYPES_FEED_ITEMS', 'lots'],
    ]) {
      const r = envSettings(manifest, { [k]: v });
      expect(r.values, `${k}=${v}`).toEqual({});
      expect(r.problems[0]).toMatch(new RegExp(`^${k}=`));
    }
    expect(envSettings(manifest, { POST_TYPES_ENABLED: 'yes' }).values).toEqual({ enabled: true });
    expect(envSettings({ id: 'x', config: null }, { X_A: '1' })).toEqual({ values: {}, problems: [] });
  });

  it("when a setting's schema names an older environment name, then it is read too, and <MODULE>_<KEY> wins over it", () => {
    const moved = { id: 'two-factor', config: z.object({ ttl: z.number().int().default(60).meta({ env: 'OLD_TTL' }), other: z.number().default(1) }) };
    expect(moduleEnvNames([{ ...moved, rateLimits: [] }])).toEqual(['TWO_FACTOR_TTL', 'OLD_TTL', 'TWO_FACTOR_OTHER']);
    expect(envSettings(moved, { OLD_TTL: '30' }).values).toEqual({ ttl: 30 });
    expect(envSettings(moved, { OLD_TTL: '30', TWO_FACTOR_TTL: '45' }).values).toEqual({ ttl: 45 });
    const bad = envSettings(moved, { OLD_TTL: 'soon' });
    expect(bad.values).toEqual({});
    expect(bad.problems[0]).toMatch(/^OLD_TTL=.*two-factor\.ttl/);
  });

  it('when a limit class is given, then "attempts/window" is its budget and anything else a problem', () => {
    expect(envLimit('post-types-write', { RATE_LIMIT_POST_TYPES_WRITE: '3/10m' })).toEqual({ rule: { points: 3, durationSec: 600 } });
    expect(envLimit('post-types-write', {})).toEqual({ rule: null });
    const bad = envLimit('post-types-write', { RATE_LIMIT_POST_TYPES_WRITE: 'often' });
    expect(bad.rule).toBeNull();
    expect(bad.problem).toMatch(/RATE_LIMIT_POST_TYPES_WRITE.*attempts\/window/);
  });
});
