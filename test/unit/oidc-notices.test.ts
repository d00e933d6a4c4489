import { afterEach, describe, expect, it, vi } from 'vitest';
import { routeProviderNotices } from '../../src/oidc/notices.js';

/** oidc-provider's NOTICE and WARNING lines (console.info / console.warn, colored on a terminal) go to the logger; nothing else does. */
describe("oidc-provider's console lines", () => {
  afterEach(() => vi.restoreAllMocks());

  it('NOTICE and WARNING lines reach the sink, plain or colored; other console lines are written as before', () => {
    const seen: [string, string][] = [];
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    routeProviderNotices((level, message) => seen.push([level, message]));
    console.info('oidc-provider NOTICE: default features.introspection.allowedPolicy in use');
    console.warn('\x1b[31;1moidc-provider WARNING: Unsupported runtime.\x1b[0m');
    console.warn('something else', 1);
    console.info('not oidc-provider NOTICE: x');
    expect(seen).toEqual([
      ['info', 'default features.introspection.allowedPolicy in use'],
      ['warn', 'Unsupported runtime.'],
    ]);
    expect(warn).toHaveBeenCalledWith('something else', 1);
    expect(info).toHaveBeenCalledWith('not oidc-provider NOTICE: x');
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
