import type { ServerResponse } from 'node:http';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A value already serialised (a cached answer): sendJson writes it as is. */
export class JsonText {
  #contentLength: string | undefined;
  constructor(readonly text: string) {}
  /** The text's length in UTF-8 bytes as the Content-Length header spells it, worked out once (a cached answer is sent many times). */
  get contentLength(): string {
    return (this.#contentLength ??= String(Buffer.byteLength(this.text)));
  }
  /** So that a JsonText that ends up inside a plain value still serialises to its content. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * Writes `value` as a JSON answer. What express's res.json does for us minus what we switched off
 * (ETag, freshness, settings look-ups), and the body goes out as a string so Node writes the head
 * and the body in one call instead of two. HEAD answers get the headers only (Node drops the body).
 */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const cached = value instanceof JsonText;
  const body = cached ? value.text : (JSON.stringify(value) ?? 'null');
  res.statusCode = status;
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', cached ? value.contentLength : Buffer.byteLength(body));
  res.end(body);
}
