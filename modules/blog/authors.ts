import type { ModuleContext } from '../../src/module-api.js';

/** Author columns on rows, read through the user service (one read for all the authors). */
export async function withAuthors<R extends Record<string, unknown>>(ctx: ModuleContext, rows: R[], idKey: string): Promise<R[]> {
  const ids = [...new Set(rows.map((r) => r[idKey] as string).filter(Boolean))];
  const users = new Map((ids.length ? await ctx.users.findMany(ids, { includeDeleted: true }) : []).map((u) => [u.id, u]));
  return rows.map((r) => {
    const u = users.get(r[idKey] as string);
    return {
      ...r,
      author_name: u?.name ?? null,
      author_last_name: u?.last_name ?? null,
      author_user_name: u?.user_name ?? null,
      author_display_name: u?.display_name ?? null,
      author_picture: u?.picture ?? null,
    };
  });
}
