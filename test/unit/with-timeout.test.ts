import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTimeout } from '../../src/with-timeout.js';

/** Blocks this process's event loop, as a long GC or a starved CPU does. */
const stall = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

describe('withTimeout', () => {
  let peer: ChildProcess;
  let port: number;
  beforeAll(async () => {
    // A peer in a process of its own (one in this process would stall with it) that echoes at once.
    peer = spawn(
      process.execPath,
      ['-e', "const s = require('net').createServer((c) => c.on('data', (d) => c.write(d))); s.listen(0, '127.0.0.1', () => console.log(s.address().port));"],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    port = await new Promise<number>((r) => peer.stdout!.once('data', (d) => r(Number(String(d).trim()))));
  });
  afterAll(() => void peer.kill());

  /** Sends a line and resolves with the echo: settled by I/O, as a Redis or database reply is. */
  async function ask(): Promise<{ reply: Promise<string>; done: () => void }> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const reply = new Promise<string>((r) => socket.once('data', (d) => r(d.toString())));
    socket.write('ping');
    return { reply, done: () => socket.destroy() };
  }

  it('when this process stalls past the timeout while the answer is already waiting, then the answer wins', async () => {
    const { reply, done } = await ask();
    try {
      const answered = withTimeout(reply, 50);
      // The echo arrives within a millisecond or two; the stall holds it in the socket past the timer.
      stall(300);
      await expect(answered).resolves.toBe('ping');
    } finally {
      done();
    }
  });

  it('when the peer never answers, then it rejects after the timeout', async () => {
    const started = Date.now();
    await expect(withTimeout(new Promise(() => undefined), 50)).rejects.toThrow('no answer within 50 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('when the answer comes first, then it is passed on, and a rejection is passed on as it is', async () => {
    await expect(withTimeout(Promise.resolve(7), 50)).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('refused')), 50)).rejects.toThrow('refused');
  });
});
