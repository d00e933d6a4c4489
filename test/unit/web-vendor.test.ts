import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * templates/web/assets/simplewebauthn-browser.js is the browser bundle of the pinned
 * @simplewebauthn/browser dependency, shipped as a page asset (no CDN): it must be that file, byte for byte.
 */
describe('vendored browser bundles', () => {
  it('simplewebauthn-browser.js is the installed @simplewebauthn/browser bundle', () => {
    const pkgDir = path.join(import.meta.dirname, '../../node_modules/@simplewebauthn/browser');
    const installed = readFileSync(path.join(pkgDir, 'dist/bundle/index.umd.min.js'));
    const shipped = readFileSync(path.join(import.meta.dirname, '../../templates/web/assets/simplewebauthn-browser.js'));
    expect(shipped.equals(installed)).toBe(true);
    const version = (JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
    expect(shipped.subarray(0, 80).toString()).toContain(`@simplewebauthn/browser@${version}`);
  });
});
