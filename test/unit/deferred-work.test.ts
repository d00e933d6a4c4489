import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { accountWorkKey, createDeferredWork } from '../../src/services/deferred-work.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function logged() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('info', sink, 'json') };
}

describe('deferred work', () => {
  it('when an answer schedules work, then it starts after the current turn, not during the request', async () => {
    const { logger } = logged();
    const deferred = createDeferredWork(logger);
    const seen: string[] = [];
    deferred.later('w', async () => void seen.push('work'));
    seen.push('answer');
    await deferred.idle();
    expect(seen).toEqual(['answer', 'work']);
  });

  it('when two works share a key, then the later one starts only after the earlier one has finished, however slow', async () => {
    const { logger } = logged();
    const deferred = createDeferredWork(logger);
    const seen: string[] = [];
    const key = accountWorkKey('u1');
    // The first request's token insert is slow; the second's void must still come after it.
    deferred.later(
      'first',
      async () => {
        seen.push('first:start');
        await sleep(60);
        seen.push('first:end');
      },
      key,
    );
    deferred.later('second', async () => void seen.push('second'), key);
    await deferred.idle();
    expect(seen).toEqual(['first:start', 'first:end', 'second']);
  });

  it('when works have different keys or none, then they do not wait for each other', async () => {
    const { logger } = logged();
    const deferred = createDeferredWork(logger);
    const seen: string[] = [];
    deferred.later(
      'slow',
      async () => {
        await sleep(60);
        seen.push('u1');
      },
      accountWorkKey('u1'),
    );
    deferred.later('other user', async () => void seen.push('u2'), accountWorkKey('u2'));
    deferred.later('no key', async () => void seen.push('none'));
    await deferred.idle();
    expect(seen).toEqual(['u2', 'none', 'u1']);
  });

  it('when an earlier work of the key fails, then it is logged and the next one still runs', async () => {
    const { lines, logger } = logged();
    const deferred = createDeferredWork(logger);
    const seen: string[] = [];
    const key = accountWorkKey('u3');
    deferred.later(
      'failing',
      async () => {
        await sleep(20);
        throw new Error('smtp gone');
      },
      key,
    );
    deferred.later('next', async () => void seen.push('next'), key);
    await deferred.idle();
    expect(seen).toEqual(['next']);
    expect(lines.filter((l) => l.msg === 'background work failed')).toEqual([expect.objectContaining({ work: 'failing', reason: 'smtp gone' })]);
  });

  it('when many works of one key are queued, then they run in the order they were scheduled', async () => {
    const { logger } = logged();
    const deferred = createDeferredWork(logger);
    const seen: number[] = [];
    const key = accountWorkKey('u4');
    for (let i = 0; i < 20; i++) {
      deferred.later(
        `w${i}`,
        async () => {
          // Later ones are quicker: without the order they would finish first.
          await sleep(20 - i);
          seen.push(i);
        },
        key,
      );
    }
    await deferred.idle();
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});
