import http from 'node:http';
import https from 'node:https';
import { checkedAddresses, parseWebhookUrl, pinnedLookup, type UrlPolicy } from './webhook-address.js';
import { signatureHeader } from './webhook-signing.js';
import type { AttemptResult } from './webhook-types.js';

export const RESPONSE_BODY_LIMIT = 1024;

export interface SendInput {
  url: string;
  messageId: string;
  body: string;
  /** The current secret first, then the previous one during a rotation's overlap; none: sent unsigned (core's own deliveries). */
  secrets: string[];
  /** The body's type: JSON unless said (an OpenID logout token is a form). */
  contentType?: string;
  timeoutMs: number;
  policy: UrlPolicy;
  /** Aborts the attempt (the worker stopping); the outcome is then `aborted`. */
  signal?: AbortSignal;
  userAgent: string;
}

/**
 * One delivery attempt: the URL checked again on its resolved address (SSRF, DNS rebinding), a POST
 * signed per Standard Webhooks to that address, redirects not followed (a 3xx is a failure), at most
 * `timeoutMs` for the whole exchange, at most 1 kB of the answer kept.
 */
export async function sendAttempt(input: SendInput, now: () => Date = () => new Date()): Promise<AttemptResult> {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  const failed = (error: string, statusCode: number | null = null, responseBody: string | null = null): AttemptResult => ({
    ok: false,
    statusCode,
    durationMs: elapsed(),
    error: error.slice(0, 500),
    responseBody,
  });
  // One deadline for the whole attempt, the address lookup included: a resolver that hangs must not
  // make an attempt outlive its lease (another claim of the same message would run beside it).
  const timeout = AbortSignal.timeout(input.timeoutMs);
  const signal = input.signal ? AbortSignal.any([timeout, input.signal]) : timeout;
  let url: URL;
  let addrs;
  try {
    url = parseWebhookUrl(input.url, input.policy);
    addrs = await untilAborted(checkedAddresses(url, input.policy), signal);
  } catch (err) {
    if (input.signal?.aborted) return { ...failed('aborted: the worker stopped'), aborted: true };
    if (timeout.aborted) return failed(`timed out after ${input.timeoutMs} ms resolving the address`);
    return failed(`refused: ${(err as Error).message}`);
  }
  const timestamp = Math.floor(now().getTime() / 1000);
  const headers: Record<string, string> = {
    'content-type': input.contentType ?? 'application/json',
    'content-length': String(Buffer.byteLength(input.body)),
    'user-agent': input.userAgent,
  };
  if (input.secrets.length) {
    headers['webhook-id'] = input.messageId;
    headers['webhook-timestamp'] = String(timestamp);
    headers['webhook-signature'] = signatureHeader(input.secrets, input.messageId, timestamp, input.body);
  }
  const client = url.protocol === 'https:' ? https : http;

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const req = client.request(url, { method: 'POST', headers, lookup: pinnedLookup(addrs), signal, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (c: Buffer) => {
        if (kept >= RESPONSE_BODY_LIMIT) return;
        chunks.push(c);
        kept += c.length;
        // Enough kept: the rest of the answer is not read.
        if (kept >= RESPONSE_BODY_LIMIT) res.destroy();
      });
      const done = () => {
        const status = res.statusCode ?? 0;
        const body = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8') || null;
        if (status >= 200 && status < 300) finish({ ok: true, statusCode: status, durationMs: elapsed(), error: null, responseBody: body });
        else finish(failed(status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`, status, body));
      };
      res.on('end', done);
      res.on('close', done);
      res.on('error', () => done());
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (input.signal?.aborted) return finish({ ...failed('aborted: the worker stopped'), aborted: true });
      if (timeout.aborted) return finish(failed(`timed out after ${input.timeoutMs} ms`));
      finish(failed(err.code ? `${err.code}: ${err.message}` : err.message));
    });
    req.end(input.body);
  });
}

/** `p`, or a rejection once `signal` aborts (`p` goes on, its outcome ignored). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(new Error('aborted'));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
