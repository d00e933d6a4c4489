import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { UserRecord, UserRepository } from '../data/repositories/user-repository.js';
import { AppError, notFound } from '../errors/app-error.js';
import { Codes } from '../errors/codes.js';
import type { Logger } from '../log/logger.js';

/** URL path under which stored pictures are served. */
export const PICTURES_URL_PATH = '/uploads/pictures';

/** Larger declared dimensions are refused: nobody needs them for an avatar, and they are decoder bombs. */
export const MAX_PICTURE_SIDE = 16_384;
export const MAX_PICTURE_PIXELS = 64_000_000;

export type ImageKind = 'jpeg' | 'png' | 'webp';
export interface ImageInfo {
  kind: ImageKind;
  ext: 'jpg' | 'png' | 'webp';
  width: number;
  height: number;
}

/**
 * Recognises JPEG, PNG and WebP by their bytes (never by name or declared type) and reads the
 * declared dimensions from the header. Null for anything else, including truncated headers.
 */
export function sniffImage(b: Buffer): ImageInfo | null {
  if (b.length >= 24 && b.subarray(0, 8).equals(PNG_SIGNATURE) && b.toString('latin1', 12, 16) === 'IHDR') {
    return info('png', 'png', b.readUInt32BE(16), b.readUInt32BE(20));
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return jpegInfo(b);
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webpInfo(b);
  return null;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const info = (kind: ImageKind, ext: ImageInfo['ext'], width: number, height: number): ImageInfo => ({ kind, ext, width, height });

/** Walks the marker segments up to the first start-of-frame, which carries the dimensions. */
function jpegInfo(b: Buffer): ImageInfo | null {
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null;
    let marker = b[i + 1];
    while (marker === 0xff && i + 2 < b.length) marker = b[++i + 1];
    i += 2;
    // Standalone markers carry no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan data before any frame
    if (i + 2 > b.length) return null;
    const len = b.readUInt16BE(i);
    if (len < 2) return null;
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (i + 7 > b.length || len < 7) return null;
      return info('jpeg', 'jpg', b.readUInt16BE(i + 5), b.readUInt16BE(i + 3));
    }
    i += len;
  }
  return null;
}

function webpInfo(b: Buffer): ImageInfo | null {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') {
    // Key frame start code, then 14-bit width and height.
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return info('webp', 'webp', b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return null;
    const bits = b.readUInt32LE(21);
    return info('webp', 'webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') {
    return info('webp', 'webp', b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
  }
  return null;
}

export const unsupportedImage = (message = 'Unsupported image: send a JPEG, PNG or WebP file') => new AppError(400, Codes.UNSUPPORTED_IMAGE, message);

/** Recognises the image or throws 400 UNSUPPORTED_IMAGE. */
export function assertAcceptableImage(bytes: Buffer): ImageInfo {
  const img = sniffImage(bytes);
  if (!img) throw unsupportedImage();
  const { width, height } = img;
  if (width < 1 || height < 1 || width > MAX_PICTURE_SIDE || height > MAX_PICTURE_SIDE || width * height > MAX_PICTURE_PIXELS) {
    throw unsupportedImage(`Unsupported image: ${width}x${height} is outside the accepted dimensions`);
  }
  return img;
}

export interface PictureServiceDeps {
  users: UserRepository;
  /** Absolute directory the files are written to. */
  dir: string;
  publicBaseUrl: string;
  /** The user service's one writer (cache invalidation and 'user.updated' included); 404 when the user is gone. */
  patchUser(userId: string, values: Partial<UserRecord>): Promise<UserRecord>;
  logger: Logger;
}

export interface PictureService {
  readonly dir: string;
  /** Stores the picture, points the user at it, and removes the previous one if it was ours. */
  replace(userId: string, bytes: Buffer): Promise<{ pictureUrl: string; user: UserRecord }>;
  /** Removes the user's picture (file and reference); harmless when there is none. */
  remove(userId: string): Promise<UserRecord>;
  /** The stored file name behind a picture URL, if this user uploaded it here; null otherwise. */
  ownedFileName(userId: string, pictureUrl: string | null | undefined): string | null;
  /**
   * Deletes the file behind a picture URL the user no longer points at (an erased account); only a
   * file this user uploaded, and nothing when there is none.
   */
  discard(userId: string, pictureUrl: string | null | undefined): Promise<void>;
}

const FILE_NAME_RE = /^([0-9a-f]{10})([0-9a-f]{32})\.(jpg|png|webp)$/;

/**
 * Profile pictures as files in the data dir. A file name starts with a tag derived from the owner's
 * id, so a user who points `picture` at someone else's file (the field is writable through the
 * profile) cannot get it deleted by uploading or deleting their own.
 */
export function createPictureService(deps: PictureServiceDeps): PictureService {
  const base = `${deps.publicBaseUrl.replace(/\/+$/, '')}${PICTURES_URL_PATH}/`;
  const ownerTag = (userId: string) => createHash('sha256').update(`gatehouse:picture:${userId}`).digest('hex').slice(0, 10);
  // One change at a time per user in this process, so a replaced file is never left behind by a race.
  const queues = new Map<string, Promise<unknown>>();

  function serial<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    const prev = queues.get(userId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    queues.set(userId, tail);
    void tail.then(() => queues.get(userId) === tail && queues.delete(userId));
    return next;
  }

  function ownedFileName(userId: string, url: string | null | undefined): string | null {
    if (!url || !url.startsWith(base)) return null;
    const name = url.slice(base.length);
    const m = FILE_NAME_RE.exec(name);
    return m && m[1] === ownerTag(userId) ? name : null;
  }

  async function removeFile(name: string | null): Promise<void> {
    if (!name) return;
    await unlink(path.join(deps.dir, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') deps.logger.warn({ err, file: name }, 'could not remove a replaced picture');
    });
  }

  async function current(userId: string): Promise<UserRecord> {
    const u = await deps.users.findById(userId);
    if (!u) throw notFound('User not found');
    return u;
  }

  return {
    dir: deps.dir,
    ownedFileName,
    async replace(userId, bytes) {
      const img = assertAcceptableImage(bytes);
      return serial(userId, async () => {
        const before = await current(userId);
        await mkdir(deps.dir, { recursive: true, mode: 0o755 });
        const name = `${ownerTag(userId)}${randomBytes(16).toString('hex')}.${img.ext}`;
        const file = path.join(deps.dir, name);
        await writeFile(file, bytes, { flag: 'wx', mode: 0o644 });
        await chmod(file, 0o644); // the umask may have narrowed it; the web server needs to read it
        const pictureUrl = base + name;
        let user: UserRecord;
        try {
          user = await deps.patchUser(userId, { picture: pictureUrl });
        } catch (err) {
          await removeFile(name);
          throw err;
        }
        await removeFile(ownedFileName(userId, before.picture));
        return { pictureUrl, user };
      });
    },
    remove(userId) {
      return serial(userId, async () => {
        const before = await current(userId);
        if (before.picture === null) return before;
        const user = await deps.patchUser(userId, { picture: null });
        await removeFile(ownedFileName(userId, before.picture));
        return user;
      });
    },
    discard(userId, pictureUrl) {
      return serial(userId, () => removeFile(ownedFileName(userId, pictureUrl)));
    },
  };
}
