import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LISTENING, removeTempDirs, runCli, startCli, stopStartedClis, tempDir } from '../helpers/cli.js';
import { rawConnection as client } from '../helpers/raw-connection.js';

afterAll(removeTempDirs);
afterEach(stopStartedClis);

const request = (path: string, body?: string) =>
  body === undefined
    ? `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`
    : `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('gatehouse serve under SIGTERM', () => {
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
  });

  it('when a burst of requests has arrived just before SIGTERM, then every one is answered (Connection: close) and none is reset', async () => {
    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env: { BCRYPT_ROUNDS: '10' } });
    const port = Number(new URL((await s.waitFor(LISTENING))[1]).port);

    // A request in flight across the signal: its headers and most of its body arrive before it,
    // the last byte only once the server has begun to stop.
    const slow = client(port);
    await slow.connected;
    const slowRequest = request('/auth/login', JSON.stringify({ email: 'slow@example.com', password: 'wrong password' }));
    slow.socket.write(slowRequest.slice(0, -1));

    // Keep-alive connections that already had an answer and sit idle, as a proxy's pool does.
    const pooled = Array.from({ length: 20 }, () => client(port));
    await Promise.all(pooled.map((c) => c.connected));
    for (const c of pooled) c.socket.write(request('/health'));
    await expect.poll(() => pooled.filter((c) => c.received().startsWith('HTTP/1.1 200')).length).toBe(pooled.length);

    // The burst: new connections with a request each, slow logins among them, and a second request
    // on every pooled connection, all written before the signal.
    const fresh = Array.from({ length: 61 }, () => client(port));
    await Promise.all(fresh.map((c) => c.connected));
    fresh.forEach((c, i) =>
      c.socket.write(
        i % 4 === 0 ? request('/auth/login', JSON.stringify({ email: `nobody${i}@example.com`, password: 'wrong password' })) : request('/health'),
      ),
    );
    for (const c of pooled) c.socket.write(request('/health'));
    s.child.kill('SIGTERM');
    await s.waitFor(/SIGTERM: finishing in-flight requests/);
    slow.socket.write(slowRequest.slice(-1));

    const outcomes = await Promise.all([...fresh, ...pooled, slow].map((c) => c.done));
    const resets = outcomes.filter((o) => o.error !== null);
    expect(resets.map((o) => o.error)).toEqual([]);
    // Every request that had arrived is answered (pipelined answers follow each other without a line break).
    const answered = outcomes.map((o) => (o.answer.match(/HTTP\/1\.1 \d{3} /g) ?? []).length);
    expect(answered.reduce((a, b) => a + b, 0)).toBe(61 + 20 * 2 + 1);
    for (const o of outcomes) expect(o.answer).not.toMatch(/HTTP\/1\.1 5\d\d /);
    // Answers given once the stop began tell the client to reconnect elsewhere.
    expect(outcomes.at(-1)!.answer).toMatch(/^HTTP\/1\.1 401 [\s\S]*\r\nconnection: close\r\n/i);
    expect((await s.exited).code).toBe(0);
  });

  it('when connections open in the moment after SIGTERM on an idle instance, then each is answered (Connection: close) and the process still exits 0 in time', async () => {
    const s = startCli(['serve', '--port', '0', '--data-dir', dir], { env: { SHUTDOWN_TIMEOUT: '3' } });
    const port = Number(new URL((await s.waitFor(LISTENING))[1]).port);
    const signalled = Date.now();
    s.child.kill('SIGTERM');
    // Only once the server has begun to stop (the build before closed its listener a poll phase later
    // and refused these): eight connections over the next ~50 ms, each with a request.
    await s.waitFor(/SIGTERM: finishing in-flight requests/);
    const late = [];
    for (let i = 0; i < 8; i++) {
      const c = client(port);
      c.socket.once('connect', () => c.socket.write(request('/health')));
      late.push(c);
      await new Promise((r) => setTimeout(r, 7));
    }
    const outcomes = await Promise.all(late.map((c) => c.done));
    expect(outcomes.map((o) => o.error)).toEqual(Array(8).fill(null));
    for (const o of outcomes) expect(o.answer).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\nconnection: close\r\n/i);
    expect((await s.exited).code).toBe(0);
    // SHUTDOWN_TIMEOUT + 5 s.
    expect(Date.now() - signalled).toBeLessThan(8_000);
  });
});
