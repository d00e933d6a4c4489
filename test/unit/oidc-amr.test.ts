import { describe, expect, it } from 'vitest';
import { amrOf } from '../../src/http/oidc-mount.js';
import { checkRedirectUri, hashSecret, secretMatches } from '../../src/oidc/clients.js';

describe('OIDC helpers', () => {
  it('amr says how the session signed in, and mfa after a second factor', () => {
    expect(amrOf('password', false)).toEqual(['pwd']);
    expect(amrOf(null, false)).toEqual(['pwd']);
    expect(amrOf('passkey', false)).toEqual(['hwk']);
    expect(amrOf('token-login', false)).toEqual(['otp']);
    expect(amrOf('social:github', false)).toEqual(['fed']);
    expect(amrOf('password', true)).toEqual(['pwd', 'otp', 'mfa']);
    expect(amrOf('passkey', true)).toEqual(['hwk', 'user', 'mfa']);
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
