import { crc32, deflateSync } from 'node:zlib';

/** Tiny but well-formed images, built byte by byte so the tests need no image library. */

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** An RGB PNG of the given size, solid red. */
export function png(width = 2, height = 3): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, Buffer.from([255, 0, 0]))]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

const segment = (marker: number, body: number[]) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
const oneCodeHuffman = (tableClass: number) => [tableClass, 1, ...new Array(15).fill(0), 0x00];

/**
 * A baseline greyscale JPEG, one 8x8 block of mid-grey: DC and AC tables each hold a single
 * one-bit code, so the whole scan is "DC difference 0, end of block" = 0b00, padded with ones.
 * `declared` lets a test lie about the frame size in the header.
 */
export function jpeg(declared: { width: number; height: number } = { width: 8, height: 8 }): Buffer {
  const { width: w, height: h } = declared;
  return Buffer.from([
    0xff,
    0xd8,
    ...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]), // JFIF APP0
    ...segment(0xdb, [0x00, ...new Array(64).fill(1)]),
    ...segment(0xc0, [8, h >> 8, h & 0xff, w >> 8, w & 0xff, 1, 1, 0x11, 0]),
    ...segment(0xc4, oneCodeHuffman(0x00)),
    ...segment(0xc4, oneCodeHuffman(0x10)),
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    0x3f,
    0xff,
    0xd9,
  ]);
}

/** 1x1 WebP images: lossy (VP8), lossless (VP8L) and extended with alpha (VP8X). */
export const webpLossy = () => Buffer.from('UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA', 'base64');
export const webpLossless = () => Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');
export const webpExtended = () =>
  Buffer.from('UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==', 'base64');

/** A multipart body with one file part. */
export function pictureForm(bytes: Buffer, opts: { field?: string; filename?: string; type?: string } = {}): FormData {
  const form = new FormData();
  form.append(opts.field ?? 'picture', new Blob([bytes], { type: opts.type ?? 'application/octet-stream' }), opts.filename ?? 'picture.bin');
  return form;
}
