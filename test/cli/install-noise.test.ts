import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, removeTempDirs, ROOT, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

describe('install noise', () => {
  it("when dependencies are installed, then no install script is left unreviewed and swagger-ui-dist's telemetry (@scarf/scarf) never runs", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    // Denied: npm 11 neither runs its postinstall nor warns; older npm runs it, and it reads this and reports nothing.
    expect(pkg.allowScripts['@scarf/scarf']).toBe(false);
    expect(pkg.scarfSettings).toEqual({ enabled: false });
    const out = execFileSync('npm', ['install-scripts', 'ls'], { cwd: ROOT, encoding: 'utf8', env: cliEnv() });
    expect(out).toContain('No packages with unreviewed install scripts.');
  });

  it("when init runs in a checkout, then the command it suggests is the checkout's bin/gatehouse, not a gatehouse on the PATH", () => {
    const dir = tempDir();
    const r = spawnSync(process.execPath, [BIN, 'init', '--yes', '--data-dir', dir], { cwd: ROOT, env: cliEnv(), encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Start it:     bin/gatehouse serve --data-dir ${dir}`);
    expect(r.stdout).toContain('create one with bin/gatehouse user create --type superadmin');
  });
});
