import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir, type RunningCli } from '../helpers/cli.js';

afterAll(removeTempDirs);

afterEach(stopStartedClis);

function serve(args: string[], env?: Record<string, string>): RunningCli {
  return startCli(['serve', '--port', '0', ...args], { env });
}

/** A port some other server already listens on. */
async function occupyPort(): Promise<{ blocker: Server; port: number }> {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  return { blocker, port: (blocker.address() as AddressInfo).port };
}

const get = async (url: string) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('gatehouse serve', () => {
  let dir: string;

  beforeAll(async () => {
    dir = tempDir();
    const r = await runCli(['init', '--yes', '--data-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('when started on an initialised dir, then it answers /health and /ready, hints at the first superadmin, and exits 0 on SIGTERM', async () => {
    const s = serve(['--data-dir', dir]);
    const url = (await s.waitFor(LISTENING))[1];
    expect(await get(`${url}/health`)).toEqual({ status: 200, body: { success: true, status: 'ok' } });
    const ready = await get(`${url}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
    await s.waitFor(/No superadmin yet/);
    expect(s.stdout).toContain(`gatehouse user create --type superadmin --email you@example.com --data-dir ${dir}`);

    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.stdout).toContain('SIGTERM: finishing in-flight requests');
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    // Not a terminal: what serve says joins the JSON log, so the stream holds JSON lines only.
    const lines = s.stdout.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines.map((l) => JSON.parse(l).msg)).toContain(`Gatehouse listening on ${url}`);
    expect(s.stderr).toBe('');
  });

  it('when a request is in flight at SIGTERM, then it is answered before the process exits', async () => {
    const s = serve(['--data-dir', dir]);
    const url = (await s.waitFor(LISTENING))[1];
    // A slow client: the server holds the connection open waiting for the rest of the body.
    const net = await import('node:net');
    const { port } = new URL(url);
    const sock = net.connect(Number(port), '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const body = JSON.stringify({ email: 'x@example.com', password: 'wrong password' });
    sock.write(`POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    let answer = '';
    sock.on('data', (d) => (answer += d));
    const closed = new Promise((r) => sock.once('close', r));
    // A fixed pause, not a poll: nothing outside the server shows that it has read the headers.
    await new Promise((r) => setTimeout(r, 200));
    s.child.kill('SIGTERM');
    await s.waitFor(/SIGTERM/);
    // write, not end: a half-closed client socket makes Node abort the request on purpose.
    sock.write(body);
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 \d{3}/);
    expect(answer).not.toMatch(/^HTTP\/1\.1 5\d\d/);
    expect((await s.exited).code).toBe(0);
  });

  it('when --workers 2 runs and a worker is killed, then requests keep succeeding and a new worker takes its place', async () => {
    const s = serve(['--data-dir', dir, '--workers', '2']);
    const url = (await s.waitFor(LISTENING))[1];
    expect(s.stdout).toMatch(/\(2 workers\)/);
    await s.waitFor(/worker \d+ listening[\s\S]*worker \d+ listening/);
    const pids = [...s.stdout.matchAll(/worker (\d+) listening/g)].map((m) => Number(m[1]));
    expect(new Set(pids).size).toBe(2);

    process.kill(pids[0], 'SIGKILL');
    // A connection handed to the worker as it died is lost with it; once the primary knows, none is.
    await s.waitFor(new RegExp(`worker ${pids[0]} exited \\(signal SIGKILL\\); starting a new one`));
    for (let i = 0; i < 5; i++) expect((await get(`${url}/health`)).status).toBe(200);
    await s.waitFor(/worker \d+ listening[\s\S]*worker \d+ listening[\s\S]*worker \d+ listening/);
    const now = [...s.stdout.matchAll(/worker (\d+) listening/g)].map((m) => Number(m[1]));
    const replacement = now[2];
    expect(pids).not.toContain(replacement);
    expect(() => process.kill(replacement, 0)).not.toThrow();
    expect((await get(`${url}/ready`)).status).toBe(200);

    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
    for (const pid of [pids[1], replacement]) expect(() => process.kill(pid, 0)).toThrow();
  });
  it("when --workers 2 serves requests, then any worker's /metrics and the METRICS_PORT both count every worker's requests", async () => {
    const { blocker, port: metricsPort } = await occupyPort();
    blocker.close();
    const s = serve(['--data-dir', dir, '--workers', '2'], { METRICS_PORT: String(metricsPort) });
    const url = (await s.waitFor(LISTENING))[1];
    await s.waitFor(/worker \d+ listening[\s\S]*worker \d+ listening/);
    // New connections each time, so both workers get some of them.
    for (let i = 0; i < 20; i++) await fetch(`${url}/health`, { headers: { Connection: 'close' } }).then((r) => r.text());
    const scrape = async (u: string) => {
      const text = await (await fetch(u, { headers: { Connection: 'close' } })).text();
      const line = text.split('\n').find((l) => l.startsWith('gatehouse_http_requests_total{') && l.includes('route="/health"') && l.includes('status="200"'));
      return Number(line?.split(' ').pop());
    };
    expect(await scrape(`http://127.0.0.1:${metricsPort}/metrics`)).toBe(20);
    // With METRICS_PORT set, the API port has no /metrics.
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);

    const t = serve(['--data-dir', dir, '--workers', '2']);
    const url2 = (await t.waitFor(LISTENING))[1];
    await t.waitFor(/worker \d+ listening[\s\S]*worker \d+ listening/);
    for (let i = 0; i < 10; i++) await fetch(`${url2}/health`, { headers: { Connection: 'close' } }).then((r) => r.text());
    // Whichever worker answers the scrape, it reports the sum over both.
    for (let i = 0; i < 4; i++) expect(await scrape(`${url2}/metrics`)).toBe(10);
    t.child.kill('SIGTERM');
    expect((await t.exited).code).toBe(0);
  });
});

describe('gatehouse serve preflight', () => {
  it('when migrations are pending, then it refuses to start in one line naming gatehouse migrate, and --migrate starts it', async () => {
    const dir = tempDir();
    // Without a database at all it creates nothing and names init.
    const none = await runCli(['serve', '--port', '0', '--data-dir', dir]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`gatehouse init --data-dir ${dir}`);
    expect(readdirSync(dir)).toEqual([]);
    writeFileSync(path.join(dir, 'gatehouse.sqlite'), '');
    const refused = await runCli(['serve', '--port', '0', '--data-dir', dir]);
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^error: refusing to start: \d+ pending migrations/);
    expect(lines[1]).toContain(`gatehouse migrate --data-dir ${dir}`);
    expect(refused.stdout).not.toContain('listening');

    const s = serve(['--data-dir', dir, '--migrate']);
    const url = (await s.waitFor(LISTENING))[1];
    expect(s.stdout).toMatch(/✔ Applying \d+ migrations/);
    expect((await get(`${url}/ready`)).status).toBe(200);
    s.child.kill('SIGINT');
    expect((await s.exited).code).toBe(0);
  });

  it('when Redis is configured but down, then it refuses to start and says so', async () => {
    const dir = tempDir();
    const r = await runCli(['serve', '--port', '0', '--data-dir', dir, '--migrate'], { env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: refusing to start: Redis is not reachable/m);
    expect(r.stderr).toContain('hint: check REDIS_URL');
  });

  it('when CORS_ORIGINS is `*` (CORS answers with credentials), then serve and init refuse it with exit 1, naming the key and what to do', async () => {
    const r = await runCli(['serve', '--port', '0', '--data-dir', tempDir(), '--migrate'], { env: { CORS_ORIGINS: '*' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/CORS_ORIGINS \(from environment\): `\*` is refused/);
    expect(r.stderr).toContain('list the origins instead');
    expect(r.stdout).not.toContain('Gatehouse listening');
    const fresh = tempDir();
    const init = await runCli(['init', '--yes', '--data-dir', fresh], { env: { CORS_ORIGINS: 'https://app.example.test,*' } });
    expect(init.code).toBe(1);
    expect(init.stderr).toMatch(/CORS_ORIGINS \(from environment\): `\*` is refused/);
    expect(readdirSync(fresh)).not.toContain('config.json');
  });

  it('when the port is taken, then it exits 1 with a hint instead of a stack', async () => {
    const { blocker, port } = await occupyPort();
    try {
      const dir = tempDir();
      const r = await runCli(['serve', '--data-dir', dir, '--migrate', '--port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: port ${port} on 127.0.0.1 is already in use`);
      expect(r.stderr).not.toContain('    at ');
    } finally {
      blocker.close();
    }
  });

  it('when workers keep crashing, then the primary gives up after a few restarts and exits 1', async () => {
    const { blocker, port } = await occupyPort();
    try {
      const dir = tempDir();
      const s = startCli(['serve', '--data-dir', dir, '--migrate', '--workers', '2', '--port', String(port)]);
      const { code } = await s.exited;
      expect(code).toBe(1);
      expect(s.stdout).toMatch(/starting a new one in 500 ms[\s\S]*starting a new one in 1000 ms/);
      expect(s.stdout).toMatch(/workers exited 5 times within 60s; giving up/);
      expect(s.stdout).not.toContain('Gatehouse listening');
    } finally {
      blocker.close();
    }
  }, 120_000);
});
