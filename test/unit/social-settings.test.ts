import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCheckContext } from '../../src/cli/checks/check.js';
import { socialCheck } from '../../src/cli/checks/social.js';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/log/logger.js';
import { createSealer } from '../../src/social/crypto.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gh-social-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const load = (env: Record<string, string>) => loadConfig({ env: { GATEHOUSE_DATA_DIR: dir, ...env }, skipFile: true, cwd: '/' });
const issues = (env: Record<string, string>) => {
  try {
    load(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i) => `${i.key}: ${i.message}`).join('\n');
  }
  throw new Error('expected a ConfigError');
};
const doctor = (env: Record<string, string>) =>
  socialCheck.run(
    createCheckContext({
      config: load(env),
      logger: createLogger('silent'),
      openApp: async () => {
        throw new Error('no app');
      },
    }),
  );

describe('SOCIAL_AUTH', () => {
  it('when it is valid JSON per provider, then it loads with the defaults of the other social keys', () => {
    const c = load({ SOCIAL_AUTH: JSON.stringify({ github: { client_id: 'a', client_secret: 'b', endpoints: { token: 'http://127.0.0.1:9000/t' } } }) });
    expect(c.socialAuth.github).toMatchObject({ client_id: 'a', endpoints: { token: 'http://127.0.0.1:9000/t' } });
    expect(c.socialLogin).toBe(false);
    expect(c.socialCallbackMode).toBe('cookie');
    expect(c.socialRedirectAllowlist).toEqual([]);
  });

  it.each([
    ['not JSON', '{github:', /JSON object/],
    ['an unknown provider', '{"twitter":{"client_id":"a"}}', /twitter/],
    ['an unknown endpoint key', '{"github":{"client_id":"a","endpoints":{"user":"http://x.test/"}}}', /endpoints/],
    ['a non-http endpoint', '{"github":{"client_id":"a","endpoints":{"token":"ftp://x.test/"}}}', /http/],
    ['no client id', '{"google":{"client_secret":"s"}}', /client_id/],
  ])('when it has %s, then the configuration is refused naming SOCIAL_AUTH', (_name, value, message) => {
    const text = issues({ SOCIAL_AUTH: value });
    expect(text).toMatch(/^SOCIAL_AUTH: /);
    expect(text).toMatch(message);
  });

  it('when SOCIAL_CALLBACK_MODE is not cookie or params, then it is refused', () => {
    expect(issues({ SOCIAL_CALLBACK_MODE: 'header' })).toMatch(/SOCIAL_CALLBACK_MODE/);
  });
});

describe('doctor: social login', () => {
  it('when social login is off and nothing is configured, then ok', async () => {
    expect((await doctor({})).status).toBe('ok');
  });

  it('when on without providers, or a provider lacks its secret or Apple its key, then it fails and says what', async () => {
    expect((await doctor({ SOCIAL_LOGIN: 'true' })).message).toMatch(/no provider/);
    const r = await doctor({
      SOCIAL_LOGIN: 'true',
      COOKIE_SECRET: 'x'.repeat(20),
      SOCIAL_AUTH: JSON.stringify({
        github: { client_id: 'a' },
        apple: { client_id: 'com.x', team_id: 'T', key_id: 'K', private_key_file: path.join(dir, 'missing.p8') },
      }),
    });
    expect(r.status).toBe('fail');
    expect(r.message).toMatch(/github: client_secret/);
    expect(r.message).toMatch(/apple: cannot read private_key_file \(ENOENT\)/);
  });

  it('when every provider is complete, then ok; plain-http endpoints off loopback only warn', async () => {
    const keyFile = path.join(dir, 'AuthKey.p8');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const base = { SOCIAL_LOGIN: 'true', COOKIE_SECRET: 'x'.repeat(20), PUBLIC_URL: 'https://auth.example.test' };
    const good = { github: { client_id: 'a', client_secret: 'b' }, apple: { client_id: 'com.x', team_id: 'T', key_id: 'K', private_key_file: keyFile } };
    expect(await doctor({ ...base, SOCIAL_AUTH: JSON.stringify(good) })).toMatchObject({ status: 'ok', message: 'on: github, apple' });
    const http = await doctor({
      ...base,
      SOCIAL_AUTH: JSON.stringify({ github: { ...good.github, endpoints: { token: 'http://proxy.example.test/token' } } }),
    });
    expect(http.status).toBe('warn');
    expect(http.message).toMatch(/endpoints.token is plain http/);
  });
});

describe('sealing provider tokens', () => {
  it('when sealed, then only the same key and purpose open it, and tampering is detected', () => {
    const a = createSealer('secret-one-0123456789', 'tokens');
    const sealed = a.seal('gho_abc');
    expect(sealed).not.toContain('gho_abc');
    expect(a.seal('gho_abc')).not.toBe(sealed);
    expect(a.open(sealed)).toBe('gho_abc');
    expect(createSealer('secret-two-0123456789', 'tokens').open(sealed)).toBeNull();
    expect(createSealer('secret-one-0123456789', 'flow').open(sealed)).toBeNull();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('x' + Buffer.from(parts[3]!, 'base64url').toString('latin1'), 'latin1').toString('base64url');
    expect(a.open(parts.join('.'))).toBeNull();
    expect(a.open('garbage')).toBeNull();
    expect(a.open(null)).toBeNull();
  });
});
