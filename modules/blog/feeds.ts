import type { Response } from 'express';
import { visibleWhere } from './access.js';
import { type ModuleContext } from '../../src/module-api.js';
import { withAuthors } from './authors.js';
import { iso, type Row } from './posts-read.js';
import type { BlogSettings } from './settings.js';
import { postTypes, publicPath, type PostTypeRules } from './types.js';

const xml = (s: unknown) =>
  String(s ?? '')
    // Non-null: the regex matches only the five keys of the map.
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

/**
 * Where a post is read: on the site (`site_url` setting) at its type's path, `/<slug_prefix>/<slug>`;
 * without a site, at its API address.
 */
function postUrl(ctx: ModuleContext, types: Map<string, PostTypeRules>, r: Row): string {
  const lang = r.lang ? `?lang=${encodeURIComponent(r.lang)}` : '';
  const site = ctx.config<BlogSettings>().site_url.replace(/\/+$/, '');
  if (!site) return `${ctx.site.publicBaseUrl}/api/v1/posts/${encodeURIComponent(r.slug)}${lang}`;
  const path = publicPath(types.get(r.post_type), r.slug).split('/').map(encodeURIComponent).join('/');
  return `${site}${path}${lang}`;
}

/** Only what anyone may read: published, public, not deleted. */
async function publicPosts(ctx: ModuleContext, limit: number): Promise<Row[]> {
  const vis = visibleWhere(null);
  const rows = await ctx.db.select<Row>(
    `SELECT p.id, p.slug, p.lang, p.post_type, p.title, p.excerpt, p.published_at, p.updated_at, p.author_id FROM blog_posts p
     WHERE ${vis.sql} ORDER BY p.published_at DESC, p.id DESC LIMIT ${limit}`,
    vis.params,
  );
  return withAuthors(ctx, rows, 'author_id');
}

function send(res: Response, type: string, body: string) {
  res.status(200);
  res.setHeader('Content-Type', `${type}; charset=utf-8`);
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.end(body);
}

export async function sitemap(ctx: ModuleContext, res: Response) {
  const [rows, types] = await Promise.all([publicPosts(ctx, 50_000), postTypes(ctx)]);
  const urls = rows.map((r) => `  <url><loc>${xml(postUrl(ctx, types, r))}</loc><lastmod>${iso(r.updated_at)}</lastmod></url>`);
  send(
    res,
    'application/xml',
    `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`,
  );
}

export async function rssFeed(ctx: ModuleContext, res: Response) {
  const cfg = ctx.config<BlogSettings>();
  const [rows, types] = await Promise.all([publicPosts(ctx, cfg.feed_items), postTypes(ctx)]);
  const self = `${ctx.site.publicBaseUrl}/api/v1/posts/feed.xml`;
  const items = rows.map(
    (r) => `    <item>
      <title>${xml(r.title)}</title>
      <link>${xml(postUrl(ctx, types, r))}</link>
      <guid isPermaLink="false">${xml(r.id)}</guid>
      <pubDate>${new Date(r.published_at as string).toUTCString()}</pubDate>
      ${r.author_name ? `<dc:creator>${xml(r.author_name)}</dc:creator>` : ''}
      <description>${xml(r.excerpt ?? '')}</description>
    </item>`,
  );
  send(
    res,
    'application/rss+xml',
    `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>${xml(cfg.feed_title)}</title>
    <link>${xml(ctx.site.publicBaseUrl)}</link>
    <description>${xml(cfg.feed_description)}</description>
    <atom:link href="${xml(self)}" rel="self" type="application/rss+xml"/>
${items.join('\n')}
  </channel>
</rss>
`,
  );
}
