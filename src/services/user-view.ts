import { PUBLIC_USER_FIELDS, USER_COLUMNS, type UserColumnType } from '../data/models/user-columns.js';
import type { UserFieldDef } from '../data/models/user.model.js';
import type { UserRecord } from '../data/repositories/user-repository.js';

export { PUBLIC_USER_FIELDS };

export type PublicUser = Record<string, unknown> & { id: string; email: string; user_type: string };

/** Never readable, whatever a module declares. */
const isWriteOnly = (name: string) => name.startsWith('acquisition_') || name === 'team_size_range';

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : typeof v === 'string' && v ? new Date(v).toISOString() : (v ?? null));
const bool = (v: unknown) => v === true || v === 1 || v === '1' || v === 'true';
const json = (v: unknown) => (v && typeof v === 'object' ? v : typeof v === 'string' ? safeJson(v) : {});

/** How a core column's stored value reads in the User object (SQLite answers 0/1, strings for dates and JSON). */
const AS_TYPE: Record<UserColumnType, (v: unknown) => unknown> = {
  string: (v) => v ?? null,
  dateonly: (v) => v ?? null,
  boolean: bool,
  date: iso,
  json,
};

/**
 * Views already built, per user record. Records are replaced, never changed in place, when a user
 * changes (the caches drop them and read the row again), and the module field list is a new array
 * whenever a module adds or removes columns; so a view is reused while both are the same objects.
 */
const views = new WeakMap<UserRecord, { fields: UserFieldDef[]; view: PublicUser }>();

/**
 * The User object of the spec: core fields plus the columns of installed modules,
 * never a password hash, token, soft-delete column or write-only field. Frozen: it is shared by every
 * answer about this user until the user changes.
 */
export function toPublicUser(u: UserRecord, moduleFields: UserFieldDef[]): PublicUser {
  const hit = views.get(u);
  if (hit && hit.fields === moduleFields) return hit.view;
  const view = Object.freeze(buildPublicUser(u, moduleFields));
  views.set(u, { fields: moduleFields, view });
  return view;
}

function buildPublicUser(u: UserRecord, moduleFields: UserFieldDef[]): PublicUser {
  const out: Record<string, unknown> = {};
  for (const f of PUBLIC_USER_FIELDS) out[f] = AS_TYPE[USER_COLUMNS[f].type](u[f]);
  for (const f of moduleFields) {
    if (f.writeOnly || isWriteOnly(f.name)) continue;
    const v = u[f.name];
    out[f.name] = f.type === 'boolean' ? (v === null || v === undefined ? null : bool(v)) : f.type === 'date' ? iso(v) : (v ?? null);
  }
  return out as PublicUser;
}

function safeJson(s: string): Record<string, unknown> {
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}
