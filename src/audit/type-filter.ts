import { OWN_SECURITY_FAMILIES } from './event-types.js';

/**
 * Whether `type` is `pattern`: the same type, in its family (`sign_in.*`, or `sign_in.` as
 * OWN_SECURITY_FAMILIES write it), or anything for `*` (a webhook's subscription to every event).
 * The one reading of a type pattern: the audit query, the CLI, the own-events view and webhooks use it.
 */
export function matchesType(type: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  if (pattern.endsWith('.')) return type.startsWith(pattern);
  return type === pattern;
}

/**
 * The declared types a filter asks for (families expanded), and the parts of it that name nothing
 * declared: the admin query and `gatehouse audit list` refuse those (400 / exit 2) instead of answering
 * an empty page that looks like "nothing happened".
 */
export function expandTypes(requested: readonly string[], declared: Iterable<string>): { types: string[]; unknown: string[] } {
  const all = [...declared];
  const types = new Set<string>();
  const unknown: string[] = [];
  for (const pattern of requested) {
    const hit = all.filter((t) => matchesType(t, pattern));
    if (!hit.length) unknown.push(pattern);
    for (const t of hit) types.add(t);
  }
  return { types: [...types], unknown };
}

/** The declared types a user sees of themselves (GET /auth/user/me/security-events). */
export function ownSecurityTypes(declared: Iterable<string>): string[] {
  return [...declared].filter((t) => OWN_SECURITY_FAMILIES.some((f) => matchesType(t, f)));
}
