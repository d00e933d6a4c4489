import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInbox } from './smtp-sink.js';

export interface SinkSms {
  to: string;
  from: string;
  body: string;
  /** The decoded basic-auth pair, "sid:token". */
  auth: string;
  /** The account id from the request path. */
  accountSid: string;
  /** The message id the sink answered with. */
  sid: string;
}

export interface SmsSink {
  /** Base URL to use as SMS_API_URL. */
  url: string;
  messages: SinkSms[];
  /** Every POST to the messages endpoint, including failed ones. */
  attempts: () => number;
  waitFor(pred: (m: SinkSms) => boolean, timeoutMs?: number): Promise<SinkSms>;
  close(): Promise<void>;
}

const PATH_RE = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/;

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/**
 * A local HTTP server speaking the Twilio Messages API subset Gatehouse uses. With `failWith`, every
 * send answers that status with a Twilio-style error body; with `delayMs`, every answer (and the
 * message being kept) waits that long, as a real provider takes its time.
 */
export async function startSmsSink(opts: { failWith?: number; delayMs?: number } = {}): Promise<SmsSink> {
  const inbox = createInbox<SinkSms>('SMS');
  let attempts = 0;
  const server = http.createServer((req, res) => {
    const match = PATH_RE.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return reply(res, 404, { code: 20404, message: 'The requested resource was not found', status: 404 });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    const answer = () => {
      attempts++;
      const accountSid = decodeURIComponent(match[1]);
      const header = req.headers.authorization ?? '';
      const auth = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : '';
      if (auth.split(':')[0] !== accountSid) return reply(res, 401, { code: 20003, message: 'Authenticate', status: 401 });
      if (opts.failWith) return reply(res, opts.failWith, { code: 21211, message: 'Simulated provider failure', status: opts.failWith });
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const sms: SinkSms = {
        to: form.get('To') ?? '',
        from: form.get('From') ?? '',
        body: form.get('Body') ?? '',
        auth,
        accountSid,
        sid: `SM${randomBytes(16).toString('hex')}`,
      };
      inbox.push(sms);
      reply(res, 201, { sid: sms.sid, status: 'queued', to: sms.to, from: sms.from, body: sms.body });
    };
    req.on('end', () => (opts.delayMs ? setTimeout(answer, opts.delayMs) : answer()));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    messages: inbox.items,
    attempts: () => attempts,
    waitFor: inbox.waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        // fetch keeps connections alive; without this, close() would wait for them to time out.
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
