import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_KEYS } from '../../src/config/schema.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The built CLI (`npm test` builds first). */
export const BIN = path.join(ROOT, 'bin', 'gatehouse');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a CLI child: the runner's own Gatehouse settings removed (so only what a test
 * passes counts), cheap bcrypt, quiet logs.
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(CONFIG_KEYS)) {
    delete env[k];
    delete env[`${k}_FILE`];
  }
  return { ...env, BCRYPT_ROUNDS: '4', LOG_LEVEL: 'warn', ...extra };
}

export interface RunOptions {
  env?: Record<string, string>;
  /** Written to stdin, which is then closed. */
  input?: string;
  timeoutMs?: number;
  /** The node binary that runs the CLI (default: the one running the tests). */
  node?: string;
}

/** Runs `node bin/gatehouse ...args` to completion. */
export function runCli(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.node ?? process.execPath, [BIN, ...args], { env: cliEnv(opts.env), cwd: os.tmpdir(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export interface RunningCli {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the first match of `re` in stdout + stderr (rejects on exit or timeout). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The line `serve` prints once it accepts requests; group 1 is its URL. */
export const LISTENING = /Gatehouse listening on (http:\/\/127\.0\.0\.1:\d+)/;

const started: RunningCli[] = [];

/** Kills whatever startCli started that is still running (call it in afterEach: a failed test leaves no server behind). */
export async function stopStartedClis(): Promise<void> {
  for (const r of started.splice(0)) {
    if (r.child.exitCode === null && r.child.signalCode === null) {
      r.child.kill('SIGKILL');
      await r.exited;
    }
  }
}

/** Starts a long-running command (serve) and lets the test watch its output; stopStartedClis() reaps it. */
export function startCli(args: string[], opts: { env?: Record<string, string>; node?: string } = {}): RunningCli {
  const child = spawn(opts.node ?? process.execPath, [BIN, ...args], { env: cliEnv(opts.env), cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((l) => l());
  child.stdout!.on('data', (d) => ((stdout += d), changed()));
  child.stderr!.on('data', (d) => ((stderr += d), changed()));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      done = true;
      changed();
      resolve({ code, signal });
    }),
  );
  const running: RunningCli = {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = (stdout + stderr).match(re);
          if (m) finish(() => resolve(m));
          else if (done) finish(() => reject(new Error(`exited before ${re}:\n${stdout}\n${stderr}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`timed out waiting for ${re}:\n${stdout}\n${stderr}`))), timeoutMs);
        const finish = (fn: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          fn();
        };
        listeners.add(check);
        check();
      });
    },
  };
  started.push(running);
  return running;
}

const dirs: string[] = [];

/** A fresh temp dir for a data dir; removeTempDirs() deletes them all. */
export function tempDir(prefix = 'gh-cli-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Parses the JSON document a `--json` command printed on stdout. */
export function json<T = any>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${r.code}):\n${r.stdout}\n--- stderr:\n${r.stderr}`);
  }
}

/** One JSON request to a server a test started (session in X-Session-ID). */
export async function call(url: string, method: string, path: string, opts: { session?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.session) headers['X-Session-ID'] = opts.session;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(url + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}
