import { expect } from 'vitest';
import type { OidcAdapter } from '../../src/oidc/adapter.js';

/**
 * Races `atOnce` consumes of one saved id, five rounds: exactly one wins, a later one loses, what is read
 * back is consumed, and a save makes it unconsumed again (oidc-provider's payload replaces what was stored).
 */
export async function raceConsumes(codes: OidcAdapter, atOnce: number): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const id = `race-${round}`;
    await codes.upsert(id, { grantId: `g-${round}` }, 60);
    const wins = await Promise.all(Array.from({ length: atOnce }, () => codes.consume(id)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect(await codes.consume(id)).toBe(false);
    expect(await codes.find(id)).toMatchObject({ consumed: expect.any(Number) });
    await codes.upsert(id, { grantId: `g-${round}` }, 60);
    expect(await codes.consume(id)).toBe(true);
  }
  expect(await codes.consume('never-saved')).toBe(false);
}
