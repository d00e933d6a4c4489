import { z } from 'zod';

export const DEFAULT_REACTIONS = ['like', 'love', 'laugh', 'wow', 'sad', 'angry', 'clap', 'insightful'];

/** The module's settings (`gatehouse module install blog --set key=value`). */
export const blogConfig = z.object({
  comments_enabled: z.boolean().default(true),
  /** New comments wait for the post author or an admin to approve them. */
  comments_require_approval: z.boolean().default(false),
  reaction_types: z
    .array(z.string().regex(/^[a-z][a-z0-9_]{0,31}$/))
    .min(1)
    .max(32)
    .default(DEFAULT_REACTIONS),
  featured_image_max_bytes: z
    .number()
    .int()
    .min(1024)
    .max(50 * 1024 * 1024)
    .default(5 * 1024 * 1024),
  /** On erasure of an author: delete their posts, or hand them to `erasure_reassign_to`. */
  erasure_posts: z.enum(['delete', 'reassign']).default('delete'),
  /** Id or email of the account that receives an erased author's posts (with erasure_posts = reassign). */
  erasure_reassign_to: z.string().max(320).default(''),
  /**
   * Where the site that shows the posts lives (https://example.com): the sitemap and feed then link
   * to `<site_url>/<slug_prefix>/<slug>`. Empty: they link to the API address of each post.
   */
  site_url: z.union([z.literal(''), z.url({ protocol: /^https?$/ }).max(500)]).default(''),
  /** Title and description of the RSS feed. */
  feed_title: z.string().max(200).default('Blog'),
  feed_description: z.string().max(500).default(''),
  feed_items: z.number().int().min(1).max(500).default(50),
});

export type BlogSettings = z.output<typeof blogConfig>;
