import { z } from 'zod';
import { USER_ALIASES } from '../../data/models/user-columns.js';

/** camelCase spellings clients send, and the snake_case names the API keeps: declared with the columns. */
export { USER_ALIASES };

/**
 * Renames alias keys before validation. When both spellings are sent, the canonical one wins and the
 * alias is dropped, so a strict schema does not reject the pair.
 */
export function withAliases<T extends z.ZodType>(aliases: Record<string, string>, schema: T) {
  return z.preprocess((v) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    const out: Record<string, unknown> = { ...(v as Record<string, unknown>) };
    for (const [alias, name] of Object.entries(aliases)) {
      if (!(alias in out)) continue;
      if (!(name in out)) out[name] = out[alias];
      delete out[alias];
    }
    return out;
  }, schema);
}

/** Any JSON object; the service validates the fields (its rules are shared with the CLI). */
export const jsonObject = z.record(z.string(), z.unknown(), 'Body must be a JSON object');
