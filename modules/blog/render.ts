import { randomBytes } from 'node:crypto';
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import slugifyLib from 'slugify';

export const BODY_FORMATS = ['markdown', 'html', 'plain'] as const;
export type BodyFormat = (typeof BODY_FORMATS)[number];

// Raw HTML inside markdown is not passed through: what markdown itself makes is all there is.
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

/**
 * What a rendered body may contain: ordinary article markup, links and images over http(s) and
 * mailto only; no scripts, styles, event handlers, frames or forms (sanitize-html drops any
 * attribute not listed, so every on* handler goes, and every `javascript:` URL with it).
 */
const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'br',
    'hr',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'blockquote',
    'pre',
    'code',
    'em',
    'strong',
    'b',
    'i',
    'u',
    's',
    'del',
    'sub',
    'sup',
    'mark',
    'small',
    'ul',
    'ol',
    'li',
    'dl',
    'dt',
    'dd',
    'a',
    'img',
    'figure',
    'figcaption',
    'table',
    'thead',
    'tbody',
    'tfoot',
    'tr',
    'th',
    'td',
    'caption',
    'span',
    'div',
    'abbr',
    'cite',
    'q',
    'kbd',
    'details',
    'summary',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    th: ['align', 'colspan', 'rowspan'],
    td: ['align', 'colspan', 'rowspan'],
    code: ['class'],
    ol: ['start'],
    abbr: ['title'],
  },
  allowedClasses: { code: [/^language-[a-z0-9_+-]+$/] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (tag, attribs) => ({
      tagName: 'a',
      attribs: attribs.target ? { ...attribs, rel: 'noopener noreferrer nofollow' } : { ...attribs, rel: attribs.rel ?? 'nofollow' },
    }),
  },
};

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The body as safe HTML, whatever its format. */
export function renderBody(body: string, format: BodyFormat): string {
  let html: string;
  if (format === 'markdown') html = md.render(body);
  else if (format === 'html') html = body;
  else
    html = body
      .split(/\n{2,}/)
      .filter((p) => p.trim())
      .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
      .join('\n');
  return sanitizeHtml(html, SANITIZE);
}

/** Plain text of any format (for excerpts and feeds). */
export function plainText(body: string, format: BodyFormat): string {
  const text = format === 'plain' ? body : sanitizeHtml(renderBody(body, format), { allowedTags: [], allowedAttributes: {} });
  return text
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

export function makeExcerpt(body: string, format: BodyFormat, max = 280): string {
  const text = plainText(body, format);
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export const SLUG_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Paths under /api/v1/posts that a slug must not shadow. */
export const RESERVED_SLUGS = new Set([
  'id',
  'categories',
  'tags',
  'comments',
  'authors',
  'bookmarks',
  'sitemap',
  'sitemap-xml',
  'feed',
  'feed-xml',
  'rss',
  'images',
  'search',
]);

/** A URL slug from a title; titles slugify drops entirely (CJK, emoji) get a short random one. */
export function slugFrom(text: string, max = 120): string {
  const s = slugifyLib(text, { lower: true, strict: true, trim: true }).slice(0, max).replace(/-+$/, '');
  const slug = s && SLUG_RE.test(s) ? s : `post-${randomBytes(4).toString('hex')}`;
  return RESERVED_SLUGS.has(slug) ? `${slug}-post` : slug;
}
