import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';

/**
 * The browser tier: Debian's Chromium driven by playwright-core (which downloads no browser). Where it
 * is: CHROMIUM_PATH, else /usr/bin/chromium; null when neither exists (then `npm test` says it skips the
 * tier, and vitest.config.ts does not define it). One browser per test file (`launchChromium` in
 * beforeAll), one context per test or per user; nothing may leave 127.0.0.1 (`guardedContext`).
 */
export function chromiumPath(): string | null {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  return existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : null;
}

/** Flags for a closed network: no background connections, no first-run, no sandbox as root. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-dev-shm-usage',
];

export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: set CHROMIUM_PATH or install Debian chromium (/usr/bin/chromium)');
  return chromium.launch({ executablePath, headless: true, args: FLAGS });
}

export interface GuardedContext {
  context: BrowserContext;
  /** Requests to any host other than 127.0.0.1 / localhost, each refused; a test asserts it stays empty. */
  foreign: string[];
  /** Console errors and uncaught page errors (a CSP violation shows here). */
  errors: string[];
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A context whose pages may reach only the local machine: every other request is aborted and noted. */
export async function guardedContext(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}): Promise<GuardedContext> {
  const context = await browser.newContext(options);
  const foreign: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || LOCAL_HOSTS.has(url.hostname)) return route.continue();
    foreign.push(url.href);
    return route.abort('blockedbyclient');
  });
  const watch = (page: Page) => {
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
  };
  context.on('page', watch);
  return {
    context,
    foreign,
    errors,
    newPage: () => context.newPage(),
    close: () => context.close(),
  };
}

export interface VirtualAuthenticator {
  cdp: CDPSession;
  authenticatorId: string;
  /** The credentials it holds (id, sign count, whether resident), as the DevTools WebAuthn domain reports them. */
  credentials(): Promise<{ credentialId: string; signCount: number; isResidentCredential: boolean; rpId?: string; userHandle?: string }[]>;
  setUserVerified(on: boolean): Promise<void>;
  /** Makes the next assertions carry this sign count (a cloned authenticator answers an old one). */
  setSignCount(credentialId: string, signCount: number): Promise<void>;
  remove(): Promise<void>;
}

/**
 * A DevTools virtual authenticator on the page's target: CTAP2, internal transport (a platform
 * authenticator, as a phone or laptop has), resident keys, user verification on unless said.
 */
export async function addVirtualAuthenticator(
  page: Page,
  opts: { userVerification?: boolean; automaticPresence?: boolean } = {},
): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: opts.userVerification ?? true,
      automaticPresenceSimulation: opts.automaticPresence ?? true,
    },
  });
  return {
    cdp,
    authenticatorId,
    async credentials() {
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      return credentials;
    },
    async setUserVerified(on) {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: on });
    },
    async setSignCount(credentialId, signCount) {
      const { credential } = await cdp.send('WebAuthn.getCredential', { authenticatorId, credentialId });
      await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId });
      await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credential, signCount } });
    },
    async remove() {
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    },
  };
}
