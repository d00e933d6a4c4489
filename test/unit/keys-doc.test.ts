import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HASHED_IDS } from '../../src/oidc/adapter.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const doc = readFileSync(path.join(ROOT, 'docs/keys.md'), 'utf8');

function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.parentPath.split(path.sep).includes('test'))
    .map((e) => path.join(e.parentPath, e.name))
    .map((f) => ({ file: path.relative(ROOT, f), text: readFileSync(f, 'utf8') }));
}

/** Every purpose a key is derived or a value sealed for, as the code names it (a string literal). */
function purposes(): { file: string; purpose: string }[] {
  const patterns = [
    /createSealer\([^,]+,\s*'([^']+)'\)/g,
    /keys\.(?:seal|open)\([^,]+,\s*'([^']+)'\)/g,
    /keys\.derive\('([^']+)'\)/g,
    /hkdfSync\('sha256',\s*[^,]+,\s*'([^']+)'/g,
    /hkdfSync\('sha256',\s*[^,]+,\s*'[^']+',\s*'([^']+)'/g,
    /cookieKey\([^,]+,\s*'([^']+)'\)/g,
  ];
  return [...sources('src'), ...sources('modules')].flatMap(({ file, text }) =>
    patterns.flatMap((re) => [...text.matchAll(re)].map((m) => ({ file, purpose: m[1] }))),
  );
}

describe('docs/keys.md, the cryptographic inventory (ASVS 11.1.2)', () => {
  it('names every key-derivation and sealing purpose the code uses', () => {
    const found = purposes();
    // The scan itself must see the known ones, or it checks nothing.
    expect(found.map((p) => p.purpose)).toEqual(expect.arrayContaining(['oidc-keys', 'webhook-secrets', 'totp', 'codes', 'limits-reset', 'cookies']));
    const missing = found.filter((p) => !doc.includes(`\`${p.purpose}\``)).map((p) => `${p.file}: ${p.purpose}`);
    expect(missing).toEqual([]);
  });

  it('names every OpenID model whose id is stored hashed', () => {
    expect([...HASHED_IDS].filter((m) => !doc.includes(m))).toEqual([]);
  });

  it('names every file it cites, and each exists', () => {
    const cited = [...doc.matchAll(/`((?:src|modules|test)\/[^`*]+?\.ts)`/g)].map((m) => m[1]);
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter((f) => !readdirSync(path.dirname(path.join(ROOT, f))).includes(path.basename(f)))).toEqual([]);
  });
});
