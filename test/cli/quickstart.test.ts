import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, ROOT, runCli, tempDir } from '../helpers/cli.js';

/*
 * `npm run quickstart` as package.json has it: its gatehouse commands before `serve`, run on a temp
 * data dir, and what the README promises of them.
 */

afterAll(removeTempDirs);

const script = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.quickstart;
const steps = script
  .split(' && ')
  .filter((c) => c.startsWith('node bin/gatehouse '))
  .map((c) => c.slice('node bin/gatehouse '.length).split(' '));

describe('npm run quickstart', () => {
  it('when its init and module install run, then mail links go to the hosted pages and the password is what stays on screen', async () => {
    expect(steps.map((s) => s[0])).toEqual(['init', 'module', 'serve']);
    const dir = tempDir();
    const [init, modules] = [steps[0], steps[1]];
    const first = await runCli([...init, '--data-dir', dir]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'))).toMatchObject({ WEB_PAGES: true, PUBLIC_URL: 'http://localhost:8787' });
    // The once-shown password closes init's output...
    expect(first.stdout.trimEnd().split('\n').at(-1)).toMatch(/^ {2}password: {3}\S+ {3}\(shown once; works for 24 hours: sign in and set your own\)$/);

    // ...and the module install after it adds one line per module (no plan, no SQL, nothing on stderr).
    const install = await runCli([...modules, '--data-dir', dir]);
    expect(install.code, install.stderr).toBe(0);
    expect(install.stdout.trimEnd().split('\n')).toEqual([
      'Installed two-factor 1.0.0 (2 migrations applied)',
      'Installed passkeys 1.0.0 (1 migration applied)',
    ]);
    expect(install.stderr).toBe('');

    // Run again: everything is kept.
    const again = await runCli([...init, '--data-dir', dir]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('superadmin: admin@example.com already exists (password unchanged)');
    expect((await runCli([...modules, '--data-dir', dir])).stdout.trim()).toBe('Already installed: two-factor, passkeys; nothing to do.');
  });
});
