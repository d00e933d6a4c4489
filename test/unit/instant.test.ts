import { describe, expect, it } from 'vitest';
import { instant } from '../../src/http/schemas/instant.js';

const read = (v: string) => instant.parse(v).toISOString();

describe('instant (the reader of since/until)', () => {
  it('when a date or a timestamp names no zone, then it is UTC, never the server local time', () => {
    expect(read('2026-01-02')).toBe('2026-01-02T00:00:00.000Z');
    expect(read('2026-01-02T03:04')).toBe('2026-01-02T03:04:00.000Z');
    expect(read('2026-01-02 03:04:05')).toBe('2026-01-02T03:04:05.000Z');
  });

  it('when a timestamp names its zone, then that zone is used', () => {
    expect(read('2026-01-02T03:04:05Z')).toBe('2026-01-02T03:04:05.000Z');
    expect(read('2026-01-02T03:04:05+02:00')).toBe('2026-01-02T01:04:05.000Z');
    expect(read('2026-01-02T03:04:05-0130')).toBe('2026-01-02T04:34:05.000Z');
  });

  it('when it is not a date, then it is refused', () => {
    for (const v of ['yesterday', '2026-13-40', '2026-01-02T', '02/01/2026']) expect(instant.safeParse(v).success, v).toBe(false);
  });
});
