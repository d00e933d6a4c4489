import { describe, expect, it } from 'vitest';
import { barChart, bucketEdges } from '../../src/web/console-charts.js';

describe('console charts', () => {
  it('when edges are asked for, then count + 1 aligned dates ending at or after now, oldest first', () => {
    const now = new Date('2026-11-26T15:20:00Z');
    const e = bucketEdges(now, 3_600_000, 24);
    expect(e).toHaveLength(25);
    expect(e[24].toISOString()).toBe('2026-11-26T16:00:00.000Z');
    expect(e[0].toISOString()).toBe('2026-11-25T16:00:00.000Z');
  });

  it('when series are drawn, then one bar per non-zero value, scaled to the largest, totals kept, the title inert', () => {
    const c = barChart('Sign-ins <b>"x"</b>', [
      { label: 'ok', values: [0, 2, 4], tone: 'ok' },
      { label: 'bad', values: [1, 0, 0], tone: 'bad' },
    ]);
    expect(c.svg.match(/<rect /g)).toHaveLength(3);
    expect(c.svg).toContain('aria-label="Sign-ins bx/b"');
    expect(c.svg).not.toMatch(/<b>/);
    expect(c.totals).toEqual([
      { label: 'ok', total: 6 },
      { label: 'bad', total: 1 },
    ]);
    const heights = [...c.svg.matchAll(/class="bar-ok"[^>]*height="(\d+)"/g)].map((m) => Number(m[1]));
    expect(heights).toEqual([39, 78]);
  });
});
