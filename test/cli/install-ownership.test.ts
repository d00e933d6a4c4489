import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostFootprint, install, INSTALL_TIMEOUT, removeInstallDirs, ROOT, tempDir } from '../helpers/install.js';

afterAll(removeInstallDirs, INSTALL_TIMEOUT);

describe('install.sh: the service user and who owns the data dir', () => {
  /** A built tree installed in place (--source = --prefix, --skip-build): no copy, no build, so init runs at once. */
  function builtTree(dir: string): string {
    const prefix = path.join(dir, 'opt');
    mkdirSync(path.join(prefix, 'src'), { recursive: true });
    for (const entry of ['package.json', 'bin', 'dist', 'templates', 'modules']) cpSync(path.join(ROOT, entry), path.join(prefix, entry), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(prefix, 'node_modules'));
    return prefix;
  }

  it(
    'when run as root with --no-system-user --user X, then the data dir, config.json and the database belong to X',
    async () => {
      const dir = tempDir();
      const prefix = builtTree(dir);
      const data = path.join(dir, 'data');
      const other = { uid: Number(execFileSync('id', ['-u', 'nobody']).toString()), gid: Number(execFileSync('id', ['-g', 'nobody']).toString()) };
      const run = await install([
        '--source',
        prefix,
        '--prefix',
        prefix,
        '--skip-build',
        '--data-dir',
        data,
        '--no-system-user',
        '--user',
        'nobody',
        '--systemd-dir',
        path.join(dir, 'systemd'),
      ]);
      expect(run.code, run.stderr).toBe(0);
      for (const p of [data, path.join(data, 'config.json'), path.join(data, 'gatehouse.sqlite')]) {
        expect([p, statSync(p).uid, statSync(p).gid]).toEqual([p, other.uid, other.gid]);
      }
      expect(run.stdout).toContain(`runuser -u nobody -- ${prefix}/bin/gatehouse doctor --data-dir ${data}`);
    },
    INSTALL_TIMEOUT,
  );

  it(
    'when run as root with --systemd-dir alone, then it writes the unit and creates no user',
    async () => {
      const dir = tempDir();
      const before = hostFootprint();
      const run = await install([
        '--prefix',
        path.join(dir, 'opt'),
        '--data-dir',
        path.join(dir, 'data'),
        '--skip-build',
        '--skip-init',
        '--systemd-dir',
        path.join(dir, 'systemd'),
      ]);
      const created = !before['passwd:gatehouse'] && hostFootprint()['passwd:gatehouse'];
      // Today's install.sh would have made one: take it away again, so a failing run leaves the host as it was.
      if (created) execFileSync('userdel', ['gatehouse']);
      expect(run.code, run.stderr).toBe(0);
      expect(created).toBe(false);
      expect(existsSync(path.join(dir, 'systemd', 'gatehouse.service'))).toBe(true);
      if (!before['passwd:gatehouse']) expect(run.stdout).toContain('the unit runs as gatehouse, which does not exist: useradd --system');
    },
    INSTALL_TIMEOUT,
  );
});
