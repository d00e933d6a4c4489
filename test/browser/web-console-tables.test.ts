import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { makeUser, uniqueEmail } from '../helpers/factories.js';
import { expectCleanPage, fitsWidth, openPage, signInOnPage } from '../helpers/web-browser.js';

// Issue 52: the console's tables wrapped words inside their columns (the modules table at 1,280 px,
// the users table at 360 px). A cell may wrap between words, never inside one; the short columns stay
// on one line; a table wider than the screen scrolls in its wrapper, the page itself never sideways.
let browser: Browser;
let w: AppWithMail;

beforeAll(async () => {
  [browser, w] = await Promise.all([launchChromium(), startAppWithMail()]);
  await w.t.app.modules.hub.install(['two-factor', 'blog']);
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
});

/**
 * For the table's cells: each word (a run without spaces or hyphens: a line may end after a hyphen)
 * whose rendered text spans more than one line, and each short-column cell (`short`: 1-based column numbers) whose text spans more than one.
 */
const brokenIn = (page: Page, short: number[]) =>
  page.evaluate(`(() => {
    const short = ${JSON.stringify(short)};
    const lines = (range) => new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
    const words = [];
    const cells = [];
    for (const row of document.querySelectorAll('.scroll table tr')) {
      [...row.children].forEach((cell, i) => {
        const all = document.createRange();
        all.selectNodeContents(cell);
        if (short.includes(i + 1) && lines(all) > 1) cells.push(cell.textContent.trim());
        const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let n = walk.nextNode(); n; n = walk.nextNode()) {
          for (const m of n.data.matchAll(/[^\\s-]+/g)) {
            const r = document.createRange();
            r.setStart(n, m.index);
            r.setEnd(n, m.index + m[0].length);
            if (lines(r) > 1) words.push(m[0]);
          }
        }
      });
    }
    return { words, cells, rows: document.querySelectorAll('.scroll table tbody tr').length };
  })()`) as Promise<{ words: string[]; cells: string[]; rows: number }>;

describe('console tables', () => {
  it('the modules table at 1,280 px: no word broken inside a column, version and state on one line', async () => {
    const admin = await makeUser(w.t, { email: uniqueEmail('tables-super'), user_type: 'superadmin' });
    const { g, page } = await openPage(browser, { viewport: { width: 1280, height: 900 } });
    await signInOnPage(page, w.t.url, admin.email, { returnTo: '/admin/modules' });
    const found = await brokenIn(page, [2, 3]);
    expect(found.rows).toBeGreaterThan(3);
    expect(found.words).toEqual([]);
    expect(found.cells).toEqual([]);
    await expectCleanPage(g, page);
    await g.close();
  });

  it('the users table at 360 px: no word broken, email, role and state on one line; the table scrolls, the page does not', async () => {
    const tag = `tbl${Date.now().toString(36)}`;
    await makeUser(w.t, { email: `${tag}.a-rather-long-address.of-someone@example.test`, name: 'Maximiliana', last_name: 'Featherstonehaugh-Cholmondeley' });
    await makeUser(w.t, { email: `${tag}.short@example.test`, name: 'Al', user_type: 'admin', is_verified: false });
    const admin = await makeUser(w.t, { email: uniqueEmail('tables-admin'), user_type: 'admin' });
    const { g, page } = await openPage(browser, { viewport: { width: 360, height: 740 } });
    await signInOnPage(page, w.t.url, admin.email, { returnTo: `/admin/users?q=${tag}` });
    const found = await brokenIn(page, [1, 3, 4]);
    expect(found.rows).toBe(2);
    expect(found.words).toEqual([]);
    expect(found.cells).toEqual([]);
    expect(await fitsWidth(page)).toBe(true);
    // The table is wider than the phone: its wrapper scrolls sideways.
    expect(
      await page.evaluate(
        `(() => { const s = document.querySelector('.scroll'); return s.scrollWidth > s.clientWidth && getComputedStyle(s).overflowX === 'auto'; })()`,
      ),
    ).toBe(true);
    await expectCleanPage(g, page);
    await g.close();
  });
});
