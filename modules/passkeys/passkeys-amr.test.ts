import { describe, expect, it } from 'vitest';
import { proofOf } from './login.js';
import type { CredentialRow } from './store.js';

/** What a passkey hands the sign-in seam as RFC 8176 `amr` (the seam records it; the OpenID provider reads it). */
describe('a passkey sign-in’s amr', () => {
  const key = (device_type: string) => ({ device_type }) as CredentialRow;
  it('a key bound to one device is hwk, a synced one swk; user and mfa with user verification', () => {
    expect(proofOf(key('singleDevice'), true).amr).toEqual(['hwk', 'user', 'mfa']);
    expect(proofOf(key('singleDevice'), false).amr).toEqual(['hwk']);
    expect(proofOf(key('multiDevice'), true).amr).toEqual(['swk', 'user', 'mfa']);
    expect(proofOf(key('multiDevice'), false)).toMatchObject({ factors: 1, amr: ['swk'] });
  });
});
