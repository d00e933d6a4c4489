import { afterAll, beforeAll } from 'vitest';
import { startSmsSink, type SmsSink } from './sms-sink.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';
import { startTestApp, type TestApp } from './test-app.js';

/**
 * "A test app plus the sinks it sends to": a real SMTP server (and, when asked, a Twilio-shaped SMS
 * API) with one app, or several, wired to them.
 */

export interface AppWithMailOptions<K extends string = never> {
  /** Settings of the main app `t`, on top of the sinks' wiring. */
  env?: Record<string, string>;
  /** Also start an SMS sink and point the apps' SMS settings at it. */
  sms?: boolean;
  /** Both sinks accept each message only after this long, as a real provider takes its time. */
  delayMs?: number;
  /** Further apps (each on a backend of its own) sending to the same sinks, by name, with their own settings (not `env`). */
  others?: Record<K, Record<string, string>>;
}

export interface AppWithMail<K extends string = never> {
  t: TestApp;
  smtp: SmtpSink;
  /** Only with `sms: true`. */
  sms: SmsSink;
  others: Record<K, TestApp>;
  /** Closes the apps, then the sinks. */
  close(): Promise<void>;
}

/** The settings that send an app's mail (and SMS) to the sinks. */
function wiring(smtp: SmtpSink, sms: SmsSink | null): Record<string, string> {
  if (!sms) return { SMTP_URL: smtp.url };
  return {
    SMTP_URL: smtp.url,
    SMS_PROVIDER: 'twilio',
    SMS_API_URL: sms.url,
    SMS_ACCOUNT_SID: 'ACtest0001',
    SMS_AUTH_TOKEN: 'sms-auth-token',
    SMS_FROM: '+15550000000',
  };
}

/** Starts the sinks, then the apps (main first, then `others` in order). */
export async function startAppWithMail<K extends string = never>(opts: AppWithMailOptions<K> = {}): Promise<AppWithMail<K>> {
  const smtp = await startSmtpSink({ delayMs: opts.delayMs });
  const sms = opts.sms ? await startSmsSink({ delayMs: opts.delayMs }) : null;
  const apps: TestApp[] = [];
  const close = async () => {
    for (const app of apps) await app.close();
    await smtp.close();
    await sms?.close();
  };
  try {
    const t = await startTestApp({ env: { ...wiring(smtp, sms), ...opts.env } });
    apps.push(t);
    const others = {} as Record<K, TestApp>;
    for (const [name, env] of Object.entries(opts.others ?? {}) as [K, Record<string, string>][]) {
      others[name] = await startTestApp({ env: { ...wiring(smtp, sms), ...env } });
      apps.push(others[name]);
    }
    return { t, smtp, sms: sms ?? late<SmsSink>('the SMS sink (start with sms: true)', () => undefined), others, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The same, started before the file's tests and closed after them. What it returns may be
 * destructured at the top of the file (`const { t, smtp } = appWithMail()`) and used from the tests
 * and from hooks registered after this call: each member stands for the one the hook started.
 */
export function appWithMail<K extends string = never>(opts: AppWithMailOptions<K> = {}): Omit<AppWithMail<K>, 'close'> {
  let started: AppWithMail<K> | undefined;
  beforeAll(async () => {
    started = await startAppWithMail(opts);
  });
  afterAll(async () => started?.close());
  const others = {} as Record<K, TestApp>;
  for (const name of Object.keys(opts.others ?? {}) as K[]) others[name] = late(`app "${name}"`, () => started?.others[name]);
  return {
    t: late('the test app', () => started?.t),
    smtp: late('the SMTP sink', () => started?.smtp),
    sms: late('the SMS sink (start with sms: true)', () => started?.sms),
    others,
  };
}

/** Stands for an object made later: every property read goes to it, and fails clearly if it is not there yet. */
function late<T extends object>(what: string, get: () => T | undefined): T {
  const target = (): T => {
    const value = get();
    if (!value) throw new Error(`${what} is not started: use it inside tests or hooks that run after appWithMail's beforeAll`);
    return value;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(target(), key) as unknown,
    has: (_, key) => Reflect.has(target(), key),
  });
}
