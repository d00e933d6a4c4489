import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

afterAll(removeTempDirs);

/** A release tarball whose `gatehouse` answers --version as a single executable would; its .sha256 beside it. */
function fakeRelease(): string {
  const work = tempDir('gh-fake-release-');
  const top = path.join(work, 'gatehouse-0.99.0');
  mkdirSync(top);
  writeFileSync(path.join(top, 'gatehouse'), '#!/bin/sh\necho 0.99.0\n');
  chmodSync(path.join(top, 'gatehouse'), 0o755);
  // Bulk, so a tarball cut short still unpacks partly before tar fails.
  writeFileSync(path.join(top, 'payload.bin'), randomBytes(2 * 1024 * 1024));
  const tarball = path.join(tempDir('gh-release-out-'), 'gatehouse-0.99.0.tar.gz');
  execFileSync('tar', ['-czf', tarball, '-C', work, 'gatehouse-0.99.0']);
  const sum = createHash('sha256').update(readFileSync(tarball)).digest('hex');
  writeFileSync(`${tarball}.sha256`, `${sum}  ${path.basename(tarball)}\n`);
  return tarball;
}

describe('gatehouse upgrade --release: a bad tarball', () => {
  it('when the tarball is corrupt, then it exits 1 and leaves nothing in the temp dir', async () => {
    const tmp = tempDir('gh-tmpdir-');
    const tarball = fakeRelease();
    truncateSync(tarball, Math.floor(statSync(tarball).size / 2));
    rmSync(`${tarball}.sha256`); // copied alone: nothing to check it against, so tar meets the damage
    const r = await runCli(['upgrade', '--release', tarball, '--data-dir', tempDir()], { env: { TMPDIR: tmp } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not a readable archive');
    expect(r.stderr).not.toContain('    at ');
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('when the tarball does not match the .sha256 beside it, then it refuses before unpacking; when it matches, it says so', async () => {
    const tmp = tempDir('gh-tmpdir-');
    const tarball = fakeRelease();
    const good = readFileSync(`${tarball}.sha256`, 'utf8');
    writeFileSync(`${tarball}.sha256`, `${'0'.repeat(64)}  ${path.basename(tarball)}\n`);
    const bad = await runCli(['upgrade', '--release', tarball, '--json', '--data-dir', tempDir()], { env: { TMPDIR: tmp } });
    expect(bad.code).toBe(1);
    expect(json(bad).error).toMatch(/does not match gatehouse-0\.99\.0\.tar\.gz\.sha256/);
    expect(readdirSync(tmp)).toEqual([]);

    writeFileSync(`${tarball}.sha256`, good);
    // The checksum passes; the preflight then stops on a data dir that is not set up.
    const checked = await runCli(['upgrade', '--release', tarball, '--data-dir', path.join(tempDir(), 'none')], { env: { TMPDIR: tmp } });
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain('✔ Release checksum (matches its .sha256)');
    expect(checked.stderr).toContain('preflight failed');
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe('one exit code for one kind of failure', () => {
  it('when upgrade, restore and backup meet a missing file, a file that is not theirs or a missing argument, then they exit alike', async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    const missing = path.join(dir, 'nope.tar.gz');
    const notOurs = path.join(dir, 'other');
    mkdirSync(notOurs);
    const junk = path.join(dir, 'junk.tar.gz');
    writeFileSync(junk, 'not an archive');
    const code = async (args: string[]) => (await runCli([...args, '--data-dir', dir])).code;
    expect([await code(['upgrade', '--release', missing]), await code(['restore', missing, '--yes'])]).toEqual([1, 1]);
    expect([await code(['upgrade', '--release', notOurs]), await code(['restore', notOurs, '--yes'])]).toEqual([1, 1]);
    expect([await code(['upgrade', '--release', junk]), await code(['restore', junk, '--yes'])]).toEqual([1, 1]);
    expect(await code(['backup', '--out', path.join(junk, 'under-a-file.tar.gz')])).toBe(1);
    expect([await code(['upgrade']), await code(['restore'])]).toEqual([2, 2]);
  });
});

describe('gatehouse backup and restore: files', () => {
  it('when a backup is written, then the archive and the database inside it are owner-only; restored into a fresh dir, no kept config is claimed', async () => {
    const dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
    const b = await runCli(['backup', '--json', '--out', path.join(dir, 'b.tar.gz'), '--data-dir', dir]);
    expect(b.code, b.stderr).toBe(0);
    const file = json(b).file as string;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const listing = execFileSync('tar', ['-tvzf', file]).toString();
    expect(listing).toMatch(/^-rw------- .* \.\/database\.sqlite$/m);

    const fresh = path.join(tempDir(), 'new-host');
    const r = await runCli(['restore', file, '--yes', '--data-dir', fresh]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(fresh, 'config.json'))).toBe(true);
    expect(existsSync(path.join(fresh, 'config.json.before-restore'))).toBe(false);
    expect(r.stdout).not.toContain('before-restore');
    expect(r.stdout).toContain('  config.json');
  });
});
