import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { guardedContext, type GuardedContext } from './chromium.js';
import { DEFAULT_PASSWORD } from './factories.js';

/** axe-core's own build, from npm. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page and returns its serious and critical violations. The source goes in
 * through the DevTools protocol (page.evaluate), not a <script> element, so the page's CSP stays as it
 * is served and is not what keeps axe out.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Whether the page fits its viewport's width (no sideways scrolling at 320 px). */
export const fitsWidth = (page: Page) => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth') as Promise<boolean>;

export interface SignInOptions {
  password?: string;
  /** Opens /login first (with `returnTo` as its return_to); false fills the form the page shows already. */
  open?: boolean;
  returnTo?: string;
  /** Where the post must land: a URL or pattern; default `returnTo`, else /account; false waits for nothing. */
  lands?: string | RegExp | false;
}

/** Signs in on the hosted /login page with an email and a password, as a person types them. */
export async function signInOnPage(page: Page, origin: string, email: string, opts: SignInOptions = {}): Promise<void> {
  const { password = DEFAULT_PASSWORD, returnTo, open = true } = opts;
  if (open) await page.goto(`${origin}/login${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`);
  await page.getByLabel('Email or user name').fill(email);
  await page.getByLabel('Password').fill(password);
  const lands = opts.lands ?? `${origin}${returnTo ?? '/account'}`;
  const submit = page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await Promise.all([lands === false ? null : page.waitForURL(lands), submit]);
}

/** The browser's session token (the `session_id` cookie), for the API calls an app would make with it. */
export async function sessionCookie(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'session_id');
  if (!cookie) throw new Error('the browser holds no session_id cookie');
  return cookie.value;
}

/** Chromium reports a 4xx page as a failed load; any other console error (a CSP refusal, a script error) counts. */
export const scriptErrors = (g: GuardedContext) => g.errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e));

/**
 * What every page holds to: nothing fetched from another host, no CSP or script error, no serious or
 * critical axe finding, and (unless `width: false`) no sideways scrolling at its viewport's width.
 */
export async function expectCleanPage(g: GuardedContext, page: Page, opts: { width?: boolean } = {}): Promise<void> {
  if (opts.width !== false) expect(await fitsWidth(page), `${page.url()} fits its width`).toBe(true);
  expect(await seriousA11yViolations(page), page.url()).toEqual([]);
  expect(g.foreign).toEqual([]);
  expect(scriptErrors(g)).toEqual([]);
}

/** A guarded context (chromium.ts) and its first page. */
export async function openPage(browser: Browser, opts: Parameters<typeof guardedContext>[1] = {}): Promise<{ g: GuardedContext; page: Page }> {
  const g = await guardedContext(browser, opts);
  return { g, page: await g.newPage() };
}
