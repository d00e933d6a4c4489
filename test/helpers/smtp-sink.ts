import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export type { ParsedMail };

/** Collected items plus a way to wait for one that has not arrived yet. Shared with the SMS sink. */
export interface Inbox<T> {
  items: T[];
  push(item: T): void;
  waitFor(pred: (item: T) => boolean, timeoutMs?: number): Promise<T>;
}

export function createInbox<T>(what: string): Inbox<T> {
  const items: T[] = [];
  const waiters = new Set<{ pred: (item: T) => boolean; resolve: (item: T) => void }>();
  return {
    items,
    push(item) {
      items.push(item);
      for (const w of waiters) {
        if (w.pred(item)) {
          waiters.delete(w);
          w.resolve(item);
        }
      }
    },
    waitFor(pred, timeoutMs = 5000) {
      const seen = items.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise<T>((resolve, reject) => {
        const waiter = {
          pred,
          resolve: (item: T) => {
            clearTimeout(timer);
            resolve(item);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`No matching ${what} within ${timeoutMs} ms (${items.length} received)`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
  };
}

export interface SmtpSink {
  /** smtp://127.0.0.1:PORT — plain SMTP, no STARTTLS offered, any AUTH accepted. */
  url: string;
  messages: ParsedMail[];
  waitFor(pred: (m: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on 127.0.0.1, port 0, keeping every message it receives, parsed. With `delayMs`,
 * each message is accepted (and kept) only after that long, as a real provider takes its time.
 */
export async function startSmtpSink(opts: { delayMs?: number } = {}): Promise<SmtpSink> {
  const inbox = createInbox<ParsedMail>('mail');
  const server = new SMTPServer({
    // No TLS in tests: without STARTTLS on offer, nodemailer speaks plain SMTP.
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      cb(null, { user: auth.username });
    },
    onData(stream, _session, cb) {
      simpleParser(stream).then(
        (mail) => {
          const accept = () => {
            inbox.push(mail);
            cb();
          };
          if (opts.delayMs) setTimeout(accept, opts.delayMs);
          else accept();
        },
        (err: Error) => cb(err),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages: inbox.items,
    waitFor: inbox.waitFor,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
