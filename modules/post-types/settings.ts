import { z } from 'zod';

/**
 * The module's settings (`gatehouse module install post-types --set key=value`), each also given by
 * the environment, which wins: `POST_TYPES_ENABLED`, `POST_TYPES_FRESH_CACHE_MODE`.
 */
export const postTypesConfig = z.object({
  /** false: the routes answer 503 MODULE_DISABLED and the blog falls back to its built-in type. */
  enabled: z.boolean().default(true),
  /** true: definitions are read from the database on every request instead of the cache. */
  fresh_cache_mode: z.boolean().default(false),
});

export type PostTypesSettings = z.output<typeof postTypesConfig>;
