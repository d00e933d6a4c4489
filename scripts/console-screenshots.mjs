#!/usr/bin/env node
// Refreshes the admin console's screenshots in docs/ (docs/console.md shows them).
//
//   node scripts/console-screenshots.mjs --url http://localhost:3000 --email admin@example.com --password '…'
//
// Needs a running Gatehouse with the console on (ADMIN_CONSOLE, default true), an admin or superadmin
// account, and Debian's chromium (or CHROMIUM_PATH). playwright-core drives it; nothing is downloaded.
// The password may also come from GATEHOUSE_ADMIN_PASSWORD, so it stays out of the shell's history.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const say = (line) => process.stdout.write(`${line}\n`);
const fail = (line) => process.stderr.write(`${line}\n`);

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://localhost:3000' },
    email: { type: 'string' },
    password: { type: 'string' },
    out: { type: 'string', default: path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs') },
    dark: { type: 'boolean', default: false },
  },
});
const password = values.password ?? process.env.GATEHOUSE_ADMIN_PASSWORD;
if (!values.email || !password) {
  fail('usage: node scripts/console-screenshots.mjs --url <base> --email <admin email> [--password <p> | GATEHOUSE_ADMIN_PASSWORD] [--out docs] [--dark]');
  process.exit(2);
}
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  fail(`no Chromium at ${executablePath}: install Debian's chromium or set CHROMIUM_PATH`);
  process.exit(2);
}

const base = values.url.replace(/\/+$/, '');
const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: values.dark ? 'dark' : 'light' });
  const page = await context.newPage();
  await page.goto(`${base}/login?return_to=${encodeURIComponent('/admin')}`);
  await page.locator('#email').fill(values.email);
  await page.locator('#password').fill(password);
  await Promise.all([page.waitForLoadState('load'), page.locator('form[data-form="login"] button[type="submit"]').click()]);
  if (!new URL(page.url()).pathname.startsWith('/admin')) {
    fail(`signing in did not reach /admin (now at ${page.url()}): wrong password, a second factor, or not an admin`);
    process.exit(1);
  }
  mkdirSync(values.out, { recursive: true });
  const suffix = values.dark ? '-dark' : '';
  const shots = [
    ['dashboard', '/admin'],
    ['users', '/admin/users'],
    ['audit', '/admin/audit'],
    ['modules', '/admin/modules'],
  ];
  for (const [name, p] of shots) {
    await page.goto(base + p);
    const file = path.join(values.out, `console-${name}${suffix}.png`);
    await page.screenshot({ path: file, fullPage: true });
    say(`wrote ${file}`);
  }
  // A user's page: the first user of the list (the account used here when it is the only one).
  await page.goto(`${base}/admin/users`);
  const first = page.locator('[data-user-link]').first();
  if (await first.count()) {
    await Promise.all([page.waitForLoadState('load'), first.click()]);
    const file = path.join(values.out, `console-user${suffix}.png`);
    await page.screenshot({ path: file, fullPage: true });
    say(`wrote ${file}`);
  }
} finally {
  await browser.close();
}
