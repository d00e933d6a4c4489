import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import express, { type Request, type RequestHandler } from 'express';
import { SIZE_PATTERN } from '../../config/readers.js';

const READ_AS_JSON = Symbol('readAsJson');
const PRESET = Symbol('presetBody');
type Marked = Request & { [READ_AS_JSON]?: true; [PRESET]?: Buffer | Error };

/**
 * For a request whose body was already read off the stream by readRaw (the fast lane, which hands a
 * request it does not answer to the app): this reader takes the bytes, or the read's error, from here.
 */
export function presetBody(req: IncomingMessage, read: Buffer | Error): void {
  (req as Marked)[PRESET] = read;
}

/**
 * The body's length when this reader takes the body itself (`application/json`, UTF-8, identity
 * encoding, a Content-Length): null when express.json has to (or there is no length to read).
 */
export function plainJsonLength(h: IncomingHttpHeaders): number | null {
  const lengthHeader = h['content-length'];
  const type = h['content-type'];
  if (
    lengthHeader === undefined ||
    type === undefined ||
    h['transfer-encoding'] !== undefined ||
    (h['content-encoding'] !== undefined && h['content-encoding'].toLowerCase() !== 'identity') ||
    !PLAIN_JSON.has(type.toLowerCase().replace(/[\s"]/g, ''))
  ) {
    return null;
  }
  const length = Number(lengthHeader);
  return Number.isSafeInteger(length) && length >= 0 ? length : null;
}

/** `100kb`, `1mb`, `512b` (the config schema's format) in bytes. */
export function parseSize(size: string): number {
  const m = SIZE_PATTERN.exec(size.trim());
  if (!m) throw new Error(`not a size: ${size}`);
  const unit = m[2].toLowerCase();
  return Number(m[1]) * (unit === 'mb' ? 1024 * 1024 : unit === 'kb' ? 1024 : 1);
}

/** The two spellings nearly every client sends; anything else goes through body-parser. */
const PLAIN_JSON = new Set(['application/json', 'application/json;charset=utf-8']);

/** An error body-parser would raise, so the error handler answers both the same way. */
function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, type, expose: true });
}

/**
 * JSON bodies. The common case (`application/json`, UTF-8, identity encoding, a Content-Length
 * within the limit) is read here: a few Buffer pushes and JSON.parse, with body-parser's rules
 * (an empty body is `{}`, only an object or array at the top, a leading BOM ignored) and its error
 * types (`entity.too.large`, `entity.parse.failed`). Everything else (chunked, compressed, other
 * charsets, `+json` types) is handed to express.json with the same limit, unchanged.
 */
export function jsonBody(limit: string): RequestHandler {
  const maxBytes = parseSize(limit);
  const fallback = express.json({ limit, type: ['application/json', 'application/*+json'] });
  return (req, res, next) => {
    const h = req.headers;
    if (h['content-length'] === undefined && h['transfer-encoding'] === undefined) return next(); // no body
    const length = plainJsonLength(h);
    if (length === null) return fallback(req, res, next);
    if (length > maxBytes) return next(bodyError(413, 'entity.too.large', 'request entity too large'));
    (req as Marked)[READ_AS_JSON] = true;
    const preset = (req as Marked)[PRESET];
    if (preset instanceof Error) return next(preset);
    if (preset) return finish(req, preset.length > 0 ? preset : null, next);
    if (length === 0) return finish(req, null, next);
    readRaw(req, length, (err, raw) => (err ? next(err) : finish(req, raw, next)));
  };
}

/**
 * Reads a body of `length` bytes (length > 0) whole, from the stream's 'data' and 'end'; fails with
 * body-parser's error types. A plain reader: the one that took a body which came with the headers in
 * one read() in a microtask measured no faster (`bench/json-body.ts`, bench/results/json-body-*.txt:
 * median 1.016× this one over three rounds), so the simpler one stays.
 */
export function readRaw(req: IncomingMessage, length: number, done: (err: Error | null, raw: Buffer | null) => void): void {
  readStream(req, length, done);
}

/** Parses a complete body into req.body (body-parser's rules), then continues or fails with its error. */
function finish(req: Request, raw: Buffer | null, next: (err?: unknown) => void): void {
  try {
    req.body = parseBody(raw);
  } catch (err) {
    return next(bodyError(400, 'entity.parse.failed', (err as Error).message));
  }
  next();
}

/** A whole body as this reader parses it (a leading BOM ignored, body-parser's strict rules); throws what JSON.parse throws. */
export function parseBody(raw: Buffer | null): unknown {
  let text = raw ? raw.toString('utf8') : '';
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return parseStrict(text);
}

function readStream(req: IncomingMessage, length: number, next: (err: Error | null, raw: Buffer | null) => void): void {
  let first: Buffer | null = null;
  let rest: Buffer[] | null = null;
  let received = 0;
  let settled = false;
  // The listeners stay until the request is dropped: an 'error' (client gone) after the end must
  // still find one, and removing them costs more than leaving them on a finished stream.
  const done = (err: Error | null, raw: Buffer | null = null) => {
    if (settled) return;
    settled = true;
    next(err, raw);
  };
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (first === null) first = chunk;
    else (rest ??= [first]).push(chunk);
  });
  req.on('end', () => {
    if (received !== length) return done(bodyError(400, 'request.size.invalid', 'request size did not match content length'));
    done(null, rest ? Buffer.concat(rest, received) : first);
  });
  // A client that goes away mid-body: Node destroys the request with an 'aborted' error.
  req.on('error', (err: Error) => done(bodyError(400, 'request.aborted', err.message), null));
}

/** body-parser's strict mode: empty is `{}`, otherwise the first non-blank character opens an object or array. */
function parseStrict(text: string): unknown {
  if (text.length === 0) return {};
  const c = text.charCodeAt(0);
  if (c === 0x7b || c === 0x5b) return JSON.parse(text); // `{` or `[` right away: what nearly every client sends
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') throw new SyntaxError(`Unexpected token ${first ?? 'end of input'} in JSON`);
  return JSON.parse(text);
}

/** Whether this reader took the body as JSON (spares a second Content-Type parse in the route pipeline). */
export const readAsJson = (req: Request): boolean => (req as Marked)[READ_AS_JSON] === true;
