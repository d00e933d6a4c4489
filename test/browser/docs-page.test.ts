import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedContext, launchChromium } from '../helpers/chromium.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

// The browser tier's own check: Chromium starts here, reaches the app on 127.0.0.1, and the offline API
// docs page renders from assets served by the app alone (no CDN, no CSP violation).
let browser: Browser;
let t: TestApp;

beforeAll(async () => {
  [browser, t] = await Promise.all([launchChromium(), startTestApp()]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('browser tier', () => {
  it('renders the offline API docs page with nothing fetched from another host', async () => {
    const g = await guardedContext(browser);
    const page = await g.newPage();
    const res = await page.goto(`${t.url}/docs`);
    expect(res?.status()).toBe(200);
    await expect.poll(() => page.locator('.swagger-ui .info .title').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await page.locator('.swagger-ui .info .title').first().innerText()).toMatch(/Gatehouse/i);
    expect(g.foreign).toEqual([]);
    expect(g.errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    await g.close();
  });

  it('refuses a request to another host (the guard itself)', async () => {
    const g = await guardedContext(browser);
    const page = await g.newPage();
    const outcome = await page.goto('http://example.com/').then(
      () => 'reached',
      () => 'refused',
    );
    expect(outcome).toBe('refused');
    expect(g.foreign).toContain('http://example.com/');
    await g.close();
  });
});
