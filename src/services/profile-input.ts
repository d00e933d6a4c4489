import { z } from 'zod';
import { canonicalEmail } from '../data/models/user-columns.js';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { UserRecord } from '../data/repositories/user-repository.js';
import { AppError, badRequest } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import { invalidInput } from '../errors/zod-issues.js';
import { clearable, profileFields, profileSchema, text } from './user-fields.js';

/** What a module's manifest says about profile bodies: its user columns and the keys it refuses. */
export interface ProfileModule {
  id: string;
  userFields: readonly UserFieldDef[];
  profileRefusals: readonly { names?: string[]; prefix?: string; message: string }[];
}

export interface ProfileInputContext {
  current: UserRecord;
  /** Every module that can be installed: its user fields and refusals decide what a profile body may carry. */
  registry: readonly ProfileModule[];
  isInstalled(moduleId: string): boolean;
}

const notAllowed = (field: string, message: string) => new AppError(400, Codes.FIELD_NOT_ALLOWED, message, [{ field, message }]);
const fill = (message: string, field: string) => message.replaceAll('{field}', field);

type Claim = { kind: 'refused'; message: string } | { kind: 'field'; module: string; def: UserFieldDef };

/** What a module says about a key a profile body carries: its own column, a refusal, or nothing. */
function claimOf(key: string, registry: ProfileInputContext['registry']): Claim | null {
  for (const m of registry) {
    const def = m.userFields.find((f) => f.name === key);
    if (def) {
      // Without a validator but with a refusal: the module's own routes write it, never a profile update.
      if (!def.schema && def.refusal) return { kind: 'refused', message: fill(def.refusal, key) };
      return { kind: 'field', module: m.id, def };
    }
    const rule = m.profileRefusals.find((r) => r.names?.includes(key) || (r.prefix !== undefined && key.startsWith(r.prefix)));
    if (rule) return { kind: 'refused', message: fill(rule.message, key) };
  }
  return null;
}

/**
 * Turns a profile update body into column values, refusing what the profile route does not own: keys
 * a module claims without a validator (its own routes write them), fields of a module that is not
 * installed, email changes, and anything unknown. `picture` is ignored: clients echo it back, and only
 * the upload route sets it. Core names no module: the registry's manifests say what they own.
 */
export function parseProfileInput(raw: unknown, ctx: ProfileInputContext): Partial<UserRecord> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('Body must be a JSON object');
  const input = raw as Record<string, unknown>;
  const core: Record<string, unknown> = {};
  const owned: { key: string; module: string; def: UserFieldDef }[] = [];
  for (const [k, v] of Object.entries(input)) {
    if (k === 'picture') continue;
    if (k === 'email') {
      const same = typeof v === 'string' && canonicalEmail(v) === canonicalEmail(ctx.current.email);
      if (!same) throw notAllowed('email', 'Email cannot be changed through the profile; use POST /auth/user/me/email (a link to the new address confirms it)');
      continue;
    }
    if (k in profileFields) {
      core[k] = v;
      continue;
    }
    const claim = claimOf(k, ctx.registry);
    if (!claim) throw badRequest(`Unknown field: ${k}`, [{ field: k, message: 'unknown field' }]);
    if (claim.kind === 'refused') throw notAllowed(k, claim.message);
    owned.push({ key: k, ...claim });
  }

  const parsed = profileSchema.safeParse(core);
  if (!parsed.success) throw invalidInput(parsed.error);
  const patch: Record<string, unknown> = { ...parsed.data };

  const missing = owned.find((o) => !ctx.isInstalled(o.module));
  if (missing) {
    throw new AppError(400, Codes.MODULE_NOT_INSTALLED, fill(missing.def.refusal ?? `{field} needs the ${missing.module} module`, missing.key), [
      { field: missing.key, message: `module ${missing.module} is not installed` },
    ]);
  }
  for (const { key, def } of owned) {
    const schema = def.schema ?? (def.type === 'boolean' ? z.union([z.null(), z.boolean()]) : clearable(text(def.length ?? 255)));
    const r = schema.safeParse(input[key]);
    if (!r.success) throw invalidInput(r.error, key);
    patch[key] = r.data;
  }
  return patch;
}
