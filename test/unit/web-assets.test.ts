import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadAssets } from '../../src/web/assets.js';

/**
 * The web layer's budget (issue 27, "Speed"): everything the pages ship as CSS and JS together stays
 * under 100 kB gzip, counted from templates/web/assets itself (what the package, the tarball and the
 * single executable carry), and the pages that matter work before or without their script.
 */
const WEB = path.join(import.meta.dirname, '../../templates/web');
const BUDGET = 100 * 1024;

describe('shipped CSS + JS', () => {
  it('when every CSS and JS asset is gzipped, then together they stay under 100 kB', () => {
    const files = readdirSync(path.join(WEB, 'assets')).filter((f) => /\.(css|js)$/.test(f));
    expect(files).toContain('web.css');
    expect(files).toContain('web.js');
    // Counted twice: as the asset table serves them (gzip level 9) and as a plain gzip of the files.
    const served = loadAssets(path.join(WEB, 'assets'))
      .all()
      .filter((a) => /\.(css|js)$/.test(a.name));
    expect(served.map((a) => a.name).sort()).toEqual([...files].sort());
    const servedBytes = served.reduce((n, a) => n + a.gzip.length, 0);
    const plainBytes = files.reduce((n, f) => n + gzipSync(readFileSync(path.join(WEB, 'assets', f))).length, 0);
    expect(servedBytes).toBeGreaterThan(0);
    expect(servedBytes).toBeLessThan(BUDGET);
    expect(plainBytes).toBeLessThan(BUDGET);
    // Each served gzip is the file itself.
    for (const a of served) expect(a.gzip.length).toBeLessThan(a.body.length);
  });

  it('when a template links a script or stylesheet, then it is a packaged asset (no CDN, nothing fetched elsewhere)', () => {
    const templates = [path.join(WEB, 'layout.eta'), ...readdirSync(path.join(WEB, 'pages')).map((f) => path.join(WEB, 'pages', f))];
    const names = new Set(readdirSync(path.join(WEB, 'assets')));
    for (const file of templates) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/<(script|link)\b[^>]*(src|href)="(https?:)?\/\//i);
      for (const m of text.matchAll(/it\.asset\('([^']+)'\)/g)) expect(names.has(m[1]), `${file}: ${m[1]}`).toBe(true);
    }
  });
});

describe('first render without JS', () => {
  it('when the script does not run, then the console search is a plain GET form with a submit button and paging is a link', () => {
    const users = readFileSync(path.join(WEB, 'pages', 'admin-users.eta'), 'utf8');
    expect(users).toMatch(/<form method="get" action="\/admin\/users"[^>]*>/);
    expect(users).toMatch(/<button type="submit">/);
    const results = readFileSync(path.join(WEB, 'pages', 'admin-users-results.eta'), 'utf8');
    // The results are rendered on the server into the page; "next" is an ordinary link carrying the cursor.
    expect(users).toContain("include('./admin-users-results'");
    expect(results).toMatch(/<a [^>]*href="<%= it\.next %>"/);
    const audit = readFileSync(path.join(WEB, 'pages', 'admin-audit.eta'), 'utf8');
    expect(audit).toMatch(/<form method="get" action="\/admin\/audit"/);
    // The only script is deferred: it never blocks the first render.
    const layout = readFileSync(path.join(WEB, 'layout.eta'), 'utf8');
    const scripts = layout.split('\n').filter((l) => l.includes('<script'));
    expect(scripts.length).toBeGreaterThan(0);
    for (const line of scripts) expect(line).toMatch(/\bdefer><\/script>/);
  });
});
