import type { ModuleContext, Transaction, UserRecord } from '../../src/module-api.js';

/**
 * The blog's security events (the manifest's `auditEvents`): a post going live and a post deleted,
 * each written in the post's transaction. `user_id` is the post's author (whom it is about), the
 * actor the signed-in writer or admin; `details.by_author` tells an author's own act from an
 * admin's moderation. A scheduled post that the job publishes when due is not recorded: its
 * author chose that when scheduling it. Titles and bodies are never in details (content, not events).
 */
export const BLOG_AUDIT_EVENTS = [
  { type: 'blog.post_published', description: 'A post went live by its author or an admin (details.post_id, post_type, by_author)' },
  { type: 'blog.post_deleted', description: 'A post was deleted by its author or an admin (details.post_id, post_type, by_author)' },
];

export interface AuditedPost {
  id: string;
  author_id: string;
  post_type: string;
}

export function recordPost(ctx: ModuleContext, what: 'published' | 'deleted', post: AuditedPost, by: UserRecord, tx: Transaction): Promise<unknown> {
  return ctx.audit.record(
    { type: `blog.post_${what}`, userId: post.author_id, details: { post_id: post.id, post_type: post.post_type, by_author: by.id === post.author_id } },
    { tx },
  );
}
