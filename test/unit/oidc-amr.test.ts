import { describe, expect, it } from 'vitest';
import { amrList, amrText, firstFactorAmr, withSecondFactor } from '../../src/services/sign-in-amr.js';
import { checkRedirectUri, hashSecret, secretMatches } from '../../src/oidc/clients.js';

describe('OIDC helpers', () => {
  it('amr (the sign-in seam its one owner) says how the session signed in in RFC 8176 values only, and mfa after a second factor', () => {
    expect(firstFactorAmr('password')).toEqual(['pwd']);
    expect(firstFactorAmr('token-login')).toEqual(['otp']);
    // A passkey says what it is: a key bound to one device, or a synced one.
    expect(firstFactorAmr('passkey', ['hwk', 'user', 'mfa'])).toEqual(['hwk', 'user', 'mfa']);
    expect(firstFactorAmr('passkey', ['swk'])).toEqual(['swk']);
    // An identity provider: its own registered values, never an invented one (`fed` is no RFC 8176 value).
    expect(firstFactorAmr('social:github')).toEqual([]);
    expect(firstFactorAmr('social:google', ['pwd', 'mfa', 'fed', 'x'.repeat(300)])).toEqual(['pwd', 'mfa']);
    expect(firstFactorAmr('social:github', ['fed'])).toEqual([]);
    expect(withSecondFactor(['pwd'], 'code')).toEqual(['pwd', 'otp', 'mfa']);
    expect(withSecondFactor(['otp'], 'code')).toEqual(['otp', 'mfa']);
    expect(withSecondFactor(['pwd'], 'trusted_device')).toEqual(['pwd', 'mfa']);
    expect(amrList(amrText(['swk', 'user', 'mfa']))).toEqual(['swk', 'user', 'mfa']);
    expect(amrText([])).toBeNull();
    expect(amrList(null)).toEqual([]);
    expect(amrList('pwd fed')).toEqual(['pwd']);
  });

  it('redirect URIs: exact https, loopback http, private schemes; nothing else', () => {
    for (const ok of ['https://app.example.test/cb', 'http://localhost:9999/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'com.example.app:/cb'])
      expect(checkRedirectUri(ok), ok).toBeNull();
    for (const bad of [
      'http://app.example.test/cb',
      'https://*.example.test/cb',
      'https://a.example.test/cb#f',
      'javascript:alert(1)',
      'data:text/html,x',
      'https://u:p@a.example.test/cb',
      'cb',
    ])
      expect(checkRedirectUri(bad), bad).not.toBeNull();
  });

  it('client secrets are compared as hashes, in constant time, and refuse what is not a string', () => {
    const h = hashSecret('s3cret');
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(secretMatches('s3cret', h)).toBe(true);
    expect(secretMatches('s3cre', h)).toBe(false);
    expect(secretMatches(undefined, h)).toBe(false);
    expect(secretMatches('s3cret', null)).toBe(false);
    expect(secretMatches('x'.repeat(600), h)).toBe(false);
  });
});
