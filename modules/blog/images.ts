import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import multer from 'multer';
import { assertCanManage, assertCanRead, type PostAccessRow } from './access.js';
import { AppError, badRequest, checkImage, notFound, type ModuleContext, type UserRecord } from '../../src/module-api.js';
import { imageUrl, loadPost, type Row } from './posts-read.js';
import type { BlogSettings } from './settings.js';

const FIELDS = ['image', 'featured_image', 'file', 'picture'];
const TYPES = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' } as const;

/** Reads the one uploaded file (multipart/form-data, field `image`, `featured_image`, `file` or `picture`). */
export async function readUpload(req: Request, res: Response, maxBytes: number): Promise<Buffer> {
  if (!req.is('multipart/form-data'))
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be multipart/form-data with the image in the field "image"');
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) {
    res.setHeader('Connection', 'close');
    throw new AppError(413, 'PAYLOAD_TOO_LARGE', `Image is larger than ${maxBytes} bytes`);
  }
  const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: maxBytes, files: 1, fields: 10, parts: 12 } }).any();
  await new Promise<void>((resolve, reject) =>
    upload(req, res, (err?: unknown) => {
      if (!err) return resolve();
      if (err instanceof multer.MulterError && err.code === 'LIMIT_FILE_SIZE') {
        res.setHeader('Connection', 'close');
        return reject(new AppError(413, 'PAYLOAD_TOO_LARGE', `Image is larger than ${maxBytes} bytes`));
      }
      reject(badRequest(err instanceof multer.MulterError ? `Invalid upload: ${err.message}` : 'Malformed multipart body'));
    }),
  );
  const files = (req.files as Express.Multer.File[] | undefined) ?? [];
  const file = files.find((f) => FIELDS.includes(f.fieldname));
  if (!file) throw badRequest('Send the image as multipart/form-data in the field "image"', [{ field: 'image', message: 'a file is required' }]);
  return file.buffer;
}

/** Stores the featured image of a post (recognised by content) and drops the one it replaces. */
export async function setFeaturedImage(ctx: ModuleContext, user: UserRecord, postId: string, req: Request, res: Response) {
  const post = await loadPost(ctx, postId);
  if (post.deleted_at) throw notFound('Post not found');
  assertCanManage(user, post as PostAccessRow);
  const bytes = await readUpload(req, res, ctx.config<BlogSettings>().featured_image_max_bytes);
  const img = checkImage(bytes);
  const id = randomUUID();
  await ctx.db.transaction(async (t) => {
    await ctx.db.exec(
      'INSERT INTO blog_images (id, post_id, ext, content_type, width, height, bytes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [id, postId, img.ext, TYPES[img.kind], img.width, img.height, bytes, new Date()],
      { tx: t },
    );
    await ctx.db.exec('UPDATE blog_posts SET featured_image_id = ?, updated_at = ? WHERE id = ?', [id, new Date(), postId], { tx: t });
    await ctx.db.exec('DELETE FROM blog_images WHERE post_id = ? AND id <> ?', [postId, id], { tx: t });
  });
  return {
    post_id: postId,
    featured_image: imageUrl(ctx, id),
    featured_image_url: imageUrl(ctx, id),
    width: img.width,
    height: img.height,
    content_type: TYPES[img.kind],
  };
}

export async function removeFeaturedImage(ctx: ModuleContext, user: UserRecord, postId: string) {
  const post = await loadPost(ctx, postId);
  if (post.deleted_at) throw notFound('Post not found');
  assertCanManage(user, post as PostAccessRow);
  await ctx.db.transaction(async (t) => {
    await ctx.db.exec('UPDATE blog_posts SET featured_image_id = NULL, updated_at = ? WHERE id = ?', [new Date(), postId], { tx: t });
    await ctx.db.exec('DELETE FROM blog_images WHERE post_id = ?', [postId], { tx: t });
  });
  return { post_id: postId, featured_image: null, featured_image_url: null };
}

/** Serves an image under the read rules of its post; user bytes, so nothing may be sniffed or run. */
export async function serveImage(ctx: ModuleContext, viewer: UserRecord | null, imageId: string, res: Response, password?: string) {
  const [img] = await ctx.db.select<Row>('SELECT i.post_id, i.content_type, i.bytes FROM blog_images i WHERE i.id = ?', [imageId]);
  if (!img) throw notFound('Image not found');
  const post = await loadPost(ctx, img.post_id);
  await assertCanRead(ctx, viewer, post as PostAccessRow, password);
  const bytes = Buffer.isBuffer(img.bytes) ? img.bytes : Buffer.from(img.bytes as Uint8Array);
  res.status(200);
  res.setHeader('Content-Type', img.content_type);
  res.setHeader('Content-Length', bytes.length);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
  res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
  res.setHeader('Cache-Control', post.visibility === 'public' && post.status === 'published' ? 'public, max-age=86400' : 'private, no-store');
  res.end(bytes);
}
