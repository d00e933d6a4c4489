import path from 'node:path';
import express, { type Request, type RequestHandler, type Response } from 'express';
import multer from 'multer';
import { AppError, badRequest } from '../../errors/app-error.js';
import { Codes } from '../../errors/codes.js';
import { toPublicUser } from '../../services/user-view.js';
import { defineRoute } from '../define-route.js';
import { notFoundHandler } from '../middleware/errors.js';

const FIELD = 'picture';
const uploaders = new Map<number, ReturnType<ReturnType<typeof multer>['single']>>();

/** One multer per size limit: memory storage, a single file in the `picture` field. */
function uploaderFor(maxBytes: number) {
  let up = uploaders.get(maxBytes);
  if (!up) {
    up = multer({
      storage: multer.memoryStorage(),
      limits: { fileSize: maxBytes, files: 1, fields: 20, fieldSize: 16 * 1024, parts: 30, headerPairs: 50 },
    }).single(FIELD);
    uploaders.set(maxBytes, up);
  }
  return up;
}

/** Room for the multipart boundaries, part headers and small fields around the file. */
const MULTIPART_OVERHEAD = 64 * 1024;

/**
 * Parses the multipart body; multer's and busboy's errors become our 4xx answers. An upload over the
 * limit is refused without reading the rest: at once when its Content-Length says so, else as soon
 * as the file passes the limit; the connection is then closed rather than drained (multer would
 * otherwise read a 300 MB body to its end before the 413 could go out).
 */
async function readPicture(req: Request, res: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_OVERHEAD) {
    res.setHeader('Connection', 'close');
    throw tooLarge(maxBytes);
  }
  // multer drains the whole body before it reports its own limit, so the bytes are counted here too.
  let onData: ((chunk: Buffer) => void) | undefined;
  const overLimit = new Promise<never>((_, reject) => {
    let seen = 0;
    onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= maxBytes + MULTIPART_OVERHEAD) return;
      // Non-null: onData is assigned before the listener that calls this can run.
      req.off('data', onData!);
      res.setHeader('Connection', 'close');
      reject(tooLarge(maxBytes));
    };
    req.on('data', onData);
  });
  const parsed = new Promise<void>((resolve, reject) =>
    uploaderFor(maxBytes)(req, res, (err?: unknown) => {
      if (!err) return resolve();
      const answer = uploadError(err, maxBytes);
      if (answer.status === 413) res.setHeader('Connection', 'close');
      reject(answer);
    }),
  );
  overLimit.catch(() => undefined);
  parsed.catch(() => undefined);
  try {
    await Promise.race([parsed, overLimit]);
  } finally {
    // Non-null: onData is assigned before the listener that calls this can run.
    req.off('data', onData!);
  }
  const file = req.file;
  if (!file) {
    throw badRequest(`Send the image as multipart/form-data in the field "${FIELD}"`, [{ field: FIELD, message: 'a file is required' }]);
  }
  return file.buffer;
}

const tooLarge = (maxBytes: number) => new AppError(413, Codes.PAYLOAD_TOO_LARGE, `Picture is larger than ${maxBytes} bytes`);

function uploadError(err: unknown, maxBytes: number): AppError {
  if (err instanceof multer.MulterError) {
    if (err.code === 'LIMIT_FILE_SIZE') return tooLarge(maxBytes);
    if (err.code === 'LIMIT_UNEXPECTED_FILE') {
      return badRequest(`Unexpected file field "${err.field ?? ''}": send the image in the field "${FIELD}"`, [
        { field: err.field ?? null, message: `expected a single file in "${FIELD}"` },
      ]);
    }
    return badRequest(`Invalid upload: ${err.message}`);
  }
  // busboy: malformed multipart (bad boundary, truncated body).
  return badRequest('Malformed multipart body');
}

/** Multipart only; the parsing itself happens in the handler, where the configured size limit is known. */
const multipartOnly: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is('multipart/form-data')) {
    next(new AppError(415, Codes.UNSUPPORTED_MEDIA_TYPE, `Content-Type must be multipart/form-data with the image in the field "${FIELD}"`));
    return;
  }
  next();
};

export const upload = defineRoute({
  method: 'post',
  path: '/auth/upload/picture',
  summary: 'Upload your profile picture',
  auth: 'session',
  middleware: [multipartOnly],
  async handler({ req, res, auth, app }) {
    const bytes = await readPicture(req, res, app.config.pictureMaxBytes);
    const { pictureUrl, user } = await app.services.pictures.replace(auth.user.id, bytes);
    return {
      success: true,
      message: 'Picture uploaded successfully',
      data: {
        picture_url: pictureUrl,
        picture: pictureUrl,
        user: toPublicUser(user, app.repos.users.extraFields()),
      },
    };
  },
});

export const remove = defineRoute({
  method: 'delete',
  path: '/auth/upload/picture',
  summary: 'Remove your profile picture',
  auth: 'session',
  async handler({ auth, app }) {
    const user = await app.services.pictures.remove(auth.user.id);
    return { success: true, message: 'Picture deleted', data: { user: toPublicUser(user, app.repos.users.extraFields()) } };
  },
});

/** The stored file's extension (jpg, png or webp: the picture service names files only so). */
const pictureExt = (file: string): string => {
  const ext = path.extname(file).slice(1).toLowerCase();
  return /^[a-z0-9]{1,8}$/.test(ext) ? ext : 'bin';
};

/**
 * Serves stored pictures. They are user-supplied bytes, so nothing may run or be sniffed from them;
 * names are random and never reused, so they can be cached for good; other sites may embed them.
 */
export function servePictures(dir: string): express.Router {
  const r = express.Router();
  r.use(
    express.static(dir, {
      index: false,
      dotfiles: 'ignore',
      redirect: false,
      fallthrough: true,
      cacheControl: false, // set below: the app-wide no-store would otherwise win
      setHeaders(res, file) {
        // A picture's name never gets other bytes, so it can be cached for good.
        res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        // Shown in place, and saved under a fixed name: never the stored name or anything a user chose (ASVS 5.4.1).
        res.setHeader('Content-Disposition', `inline; filename="picture.${pictureExt(file)}"`);
        res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
        res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
      },
    }),
  );
  r.use(notFoundHandler);
  return r;
}
