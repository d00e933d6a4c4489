import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MIN_NODE, runtimeSupport, SUPPORTED_LINES } from '../../src/cli/checks/node-version.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const today = new Date('2026-11-26T12:00:00Z');

describe('runtimeSupport (the doctor and preflight check of the Node.js version)', () => {
  it('when Node.js is 22 or 24 LTS, then it is ok and says until when', () => {
    expect(runtimeSupport('24.21.0', today)).toMatchObject({ status: 'ok', message: expect.stringContaining('supported until 2028-04-30') });
    expect(runtimeSupport('v22.22.0', today)).toMatchObject({ status: 'ok', message: expect.stringContaining('supported until 2027-04-30') });
  });

  it('when Node.js is 20, then it still starts but warns that 20 reached end of life and names the supported lines', () => {
    const r = runtimeSupport('20.20.2', today);
    expect(r.status).toBe('warn');
    expect(r.message).toContain('Node.js 20 reached end of life on 2026-04-30');
    expect(r.message).toContain('supports 22 and 24');
    expect(r.hint).toMatch(/Node\.js 24/);
  });

  it('when a supported line passes its end of life, then it warns too', () => {
    expect(runtimeSupport('22.22.0', new Date('2027-05-01T00:00:00Z'))).toMatchObject({ status: 'warn', message: expect.stringContaining('end of life') });
  });

  it('when Node.js is an untested line or release, then it warns; below 20.19, then it fails', () => {
    expect(runtimeSupport('23.11.0', today)).toMatchObject({ status: 'warn', message: expect.stringContaining('not a line Gatehouse is tested on') });
    expect(runtimeSupport('22.11.0', today)).toMatchObject({ status: 'warn', message: expect.stringContaining('supports Node.js 22 from 22.12.0') });
    expect(runtimeSupport('20.18.3', today)).toMatchObject({ status: 'fail', message: expect.stringContaining('needs >= 20.19.0') });
  });
});

describe('package.json "engines"', () => {
  it('when npm reads it, then it names the same floor and supported releases as the doctor', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe(`^${MIN_NODE} || ^${SUPPORTED_LINES[22]!.from} || >=${SUPPORTED_LINES[24]!.from}`);
  });
});
