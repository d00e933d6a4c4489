import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config/schema.js';
import { loadConfig } from '../../src/config/load-config.js';
import { CORE_LIMIT_CLASSES, createLimitClassTable, limitEnvName } from '../../src/limits/limit-classes.js';
import { createMemoryRateLimiter } from '../../src/limits/memory-limiter.js';
import { defineModule, defineRoute } from '../../src/module-api.js';
import { perSession } from '../../src/http/middleware/rate-limit-classes.js';
import { moduleEnvNames } from '../../src/modules/module-env.js';
import twoFactor from '../../modules/two-factor/index.js';

const handler = async () => ({ success: true });

describe('limit class table', () => {
  it('when a core class is listed, then RATE_LIMIT_<CLASS> is the configuration key of the setting it reads', () => {
    for (const [name, setting] of Object.entries(CORE_LIMIT_CLASSES)) {
      const key = limitEnvName(name) as keyof typeof CONFIG_KEYS;
      expect(CONFIG_KEYS[key]?.prop, name).toBe(setting);
    }
  });

  it('when a module declares classes, then they sit in the same table under module:<id>:<name>, the operator overriding the default', () => {
    const env = { RATE_LIMIT_TWO_FACTOR: '7/2m', RATE_LIMIT_LOGIN: '9/1h' };
    const config = loadConfig({ env, skipFile: true, moduleEnv: moduleEnvNames([twoFactor]) });
    const table = createLimitClassTable(config, [twoFactor]);
    expect(table.get('login')).toMatchObject({ rule: { points: 9, durationSec: 3600 }, env: 'RATE_LIMIT_LOGIN' });
    expect(table.get('module:two-factor:two-factor')).toMatchObject({
      rule: { points: 7, durationSec: 120 },
      env: 'RATE_LIMIT_TWO_FACTOR',
      fromOperator: true,
      module: 'two-factor',
    });
    expect(table.get('module:two-factor:two-factor-user')).toMatchObject({ rule: { points: 5, durationSec: 900 }, fromOperator: false });
    // Core no longer carries the module's class.
    expect(table.has('second-factor')).toBe(false);
    expect(() => table.get('two-factor-user')).toThrow(/not declared/);
    expect(table.all().map((c) => c.name)).toEqual([...Object.keys(CORE_LIMIT_CLASSES), ...twoFactor.rateLimits.map((r) => `module:two-factor:${r.name}`)]);
  });

  it('when a module class is counted, then the limiter keeps it apart from a core bucket of the same declared name', async () => {
    const limiter = createMemoryRateLimiter();
    const one = { points: 1, durationSec: 60 };
    expect((await limiter.consume('module:two-factor:login', 'k', one)).allowed).toBe(true);
    expect((await limiter.consume('login', 'k', one)).allowed).toBe(true);
    expect((await limiter.consume('module:two-factor:login', 'k', one)).allowed).toBe(false);
    await expect(limiter.consume('module', 'two-factor:login:k', one)).rejects.toThrow(TypeError);
    await expect(limiter.consume('module:Two:x', 'k', one)).rejects.toThrow(TypeError);
  });
});

describe('module manifests and limit classes', () => {
  const route = (rateLimit: Parameters<typeof defineRoute>[0]['rateLimit']) =>
    defineRoute({ method: 'get', path: '/m/x', auth: 'public', module: 'lim-mod', rateLimit, handler });
  const manifest =
    (rateLimit: Parameters<typeof defineRoute>[0]['rateLimit'], names = ['lim-mod-tries']) =>
    () =>
      defineModule({
        id: 'lim-mod',
        version: '1.0.0',
        description: 'limits',
        routes: [route(rateLimit)],
        rateLimits: names.map((name) => ({ name, points: 3, durationSec: 60, description: name })),
      });

  it("when a route counts in a core class or the module's own, then the manifest is accepted", () => {
    expect(manifest('admin')).not.toThrow();
    expect(manifest('module:lim-mod:lim-mod-tries')).not.toThrow();
    expect(manifest(perSession('module:lim-mod:lim-mod-tries'))).not.toThrow();
  });

  it("when a route counts in another module's class or an undeclared one, then the manifest is refused", () => {
    expect(manifest('module:two-factor:two-factor')).toThrow(/belongs to another module/);
    expect(manifest(perSession('module:lim-mod:nope'))).toThrow(/neither core's nor declared/);
    expect(manifest('second-factor' as never)).toThrow(/neither core's nor declared/);
  });

  it("when a module declares a class with a core class's name, then the manifest is refused (its variable would be core's)", () => {
    expect(manifest('admin', ['login'])).toThrow(/core class's name \(RATE_LIMIT_LOGIN/);
  });
});
