import type { Config } from '../config/schema.js';
import { limitClassesOf, type LimitDeclaring, type LimitTableConfig } from './limit-classes.js';
import type { LimitResult, RateLimiter } from './limit-types.js';

export interface CountInClassDeps {
  config: LimitTableConfig & Pick<Config, 'rateLimitsEnabled'>;
  limiter: Pick<RateLimiter, 'consume'>;
  /** Modules whose classes the table holds besides core's (a core class needs none). */
  modules?: readonly LimitDeclaring[];
}

/**
 * Counts one hit of `key` in the limit class `cls` outside the gate, with the class's configured
 * budget: a page's own budget (the /device page's per-session code look-ups), a failed client
 * authentication (the OpenID provider). Null with rate limits off: nothing is counted.
 */
export async function countInClass(deps: CountInClassDeps, cls: string, key: string): Promise<LimitResult | null> {
  if (!deps.config.rateLimitsEnabled) return null;
  const { rule } = limitClassesOf(deps.config, deps.modules ?? []).get(cls);
  return deps.limiter.consume(cls, key, rule);
}
