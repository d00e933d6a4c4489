import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server started as a child process, with the tail of its output kept for error messages. */
export interface ChildServer {
  name: string;
  url: string;
  pid: number;
  output(): string;
  /** CPU time (user + system, ms) used so far by the child and its workers; null where /proc is unavailable. */
  cpuMs(): number | null;
  stop(): Promise<void>;
}

const running = new Set<ChildServer>();

/** Stops every child still running (they sit in their own process groups, so Ctrl-C does not reach them). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((c) => c.stop()));
}

const TICKS_PER_SEC = 100; // USER_HZ on Linux

/**
 * CPU time of every live process in the group (the child started it, so its cluster workers are in
 * it). Unlike req/s, this barely moves when other work shares the machine.
 */
export function groupCpuMs(pgid: number): number | null {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return null;
  }
  let ticks = 0;
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the parenthesised command: state ppid pgrp ... utime(14) stime(15), 1-based overall.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) !== pgid) continue;
    ticks += Number(f[11]) + Number(f[12]);
  }
  return (ticks * 1000) / TICKS_PER_SEC;
}

/** A port nobody listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface StartOptions {
  name: string;
  args: string[];
  env: Record<string, string | undefined>;
  port: number;
  /** Polled until it answers 200. */
  readyPath: string;
  readyTimeoutMs?: number;
  cwd?: string;
}

let nodeBin: string | undefined;

/**
 * The node every server (Gatehouse and the baselines alike) runs on: the node running the bench (the
 * machine's), or with `BENCH_NODE=24` the Node 24 LTS Gatehouse ships (release/node24, installed from the
 * npm registry when missing), or `BENCH_NODE=/path/to/node`. The targets were set on Node 20,
 * where Express is three times slower than on Node 24 (bench/README.md, "Which Node").
 */
export function serverNode(): string {
  if (nodeBin) return nodeBin;
  const choice = process.env.BENCH_NODE;
  if (!choice || choice === 'system') nodeBin = process.execPath;
  else if (choice === '24') {
    const root = fileURLToPath(new URL('../..', import.meta.url)); // dist/bench/processes.js → repository root
    const dir = execFileSync(process.execPath, [path.join(root, 'release', 'node24', 'runtime.mjs'), '--bin'], { encoding: 'utf8' }).trim();
    nodeBin = path.join(dir, 'node');
  } else nodeBin = choice;
  return nodeBin;
}

/** `node --version` of serverNode(), for the report. */
export const serverNodeVersion = () => execFileSync(serverNode(), ['--version'], { encoding: 'utf8' }).trim();

/** Starts `node <args>` (serverNode()) in its own process group and waits until it answers on readyPath. */
export async function startChild(opts: StartOptions): Promise<ChildServer> {
  const child = spawn(serverNode(), opts.args, {
    cwd: opts.cwd,
    env: opts.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let dead = false;
  void exited.then(() => (dead = true));

  const url = `http://127.0.0.1:${opts.port}`;
  const server: ChildServer = {
    name: opts.name,
    url,
    pid: child.pid!,
    output: () => tail,
    cpuMs: () => groupCpuMs(child.pid!),
    stop: async () => {
      await stopChild(child, exited);
      running.delete(server);
    },
  };
  running.add(server);
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (dead) throw new Error(`${opts.name} exited before it was ready:\n${tail}`);
    try {
      const r = await fetch(url + opts.readyPath, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return server;
    } catch {
      /* not listening yet */
    }
    await sleep(200);
  }
  await server.stop();
  throw new Error(`${opts.name} did not answer ${opts.readyPath} within the time limit:\n${tail}`);
}

/** SIGTERM to the child (a cluster primary stops its workers), then SIGKILL to its whole group if anything lingers. */
async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  const group = (sig: NodeJS.Signals | 0) => {
    try {
      process.kill(-child.pid!, sig);
      return true;
    } catch {
      return false; // nobody left in the group
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!done) {
      group('SIGKILL');
      await exited;
    }
  }
  for (let i = 0; i < 25 && group(0); i++) await sleep(200);
  group('SIGKILL');
}
