import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { createRefusalLog, REFUSAL_MESSAGE, REFUSAL_OVERFLOW_MESSAGE } from '../../src/log/refusal-log.js';
import { captureLog } from '../helpers/test-app.js';

/* The refusal log alone (src/log/refusal-log.ts): counts per address and class, a line each per minute. */

const T0 = Date.UTC(2026, 4, 4, 10, 17, 0);

function setup(maxKeys?: number) {
  const log = captureLog();
  let now = T0 + 1_000;
  const refusals = createRefusalLog(createLogger('info', log.stream, 'json'), { now: () => now, maxKeys });
  const lines = () =>
    log
      .text()
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { refusals, lines, move: (ms: number) => (now += ms) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('refusal log', () => {
  it('when refusals come within one minute, then nothing is written until it closes, then one line per address and class with the count', () => {
    const { refusals, lines, move } = setup();
    for (let i = 0; i < 1000; i++) refusals.refused('203.0.113.7', 'default');
    for (let i = 0; i < 3; i++) refusals.refused('203.0.113.7', 'login');
    refusals.refused('203.0.113.8', 'default');
    expect(lines()).toEqual([]);
    move(60_000);
    refusals.refused('203.0.113.7', 'default');
    const minute = new Date(T0).toISOString();
    expect(lines().map(({ msg, remoteAddress, limitClass, count, minute: m }) => ({ msg, remoteAddress, limitClass, count, m }))).toEqual([
      { msg: REFUSAL_MESSAGE, remoteAddress: '203.0.113.7', limitClass: 'default', count: 1000, m: minute },
      { msg: REFUSAL_MESSAGE, remoteAddress: '203.0.113.7', limitClass: 'login', count: 3, m: minute },
      { msg: REFUSAL_MESSAGE, remoteAddress: '203.0.113.8', limitClass: 'default', count: 1, m: minute },
    ]);
    refusals.close();
    expect(lines().slice(3)).toMatchObject([{ remoteAddress: '203.0.113.7', limitClass: 'default', count: 1, minute: new Date(T0 + 60_000).toISOString() }]);
    // Nothing held: closing again writes nothing.
    refusals.flush();
    expect(lines()).toHaveLength(4);
  });

  it('when the minute ends with no further refusal, then its timer writes the lines', () => {
    vi.useFakeTimers();
    const { refusals, lines, move } = setup();
    refusals.refused('203.0.113.7', 'default');
    vi.advanceTimersByTime(30_000);
    expect(lines()).toEqual([]);
    move(60_000);
    vi.advanceTimersByTime(30_000);
    expect(lines()).toMatchObject([{ limitClass: 'default', count: 1 }]);
    refusals.close();
  });

  it('when more pairs than it tracks are refused in a minute, then the others are counted together in one line', () => {
    const { refusals, lines } = setup(2);
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) for (let i = 0; i < 5; i++) refusals.refused(a, 'default');
    refusals.refused('10.0.0.1', 'default');
    refusals.flush();
    expect(lines().map((l) => [l.msg, l.remoteAddress, l.count])).toEqual([
      [REFUSAL_MESSAGE, '10.0.0.1', 6],
      [REFUSAL_MESSAGE, '10.0.0.2', 5],
      [REFUSAL_OVERFLOW_MESSAGE, undefined, 10],
    ]);
  });
});
