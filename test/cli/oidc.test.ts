import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, removeTempDirs, runCli, tempDir } from '../helpers/cli.js';

let dir: string;
beforeAll(async () => {
  dir = tempDir();
  expect((await runCli(['init', '--yes', '--data-dir', dir])).code).toBe(0);
});
afterAll(removeTempDirs);

const oidc = (args: string[]) => runCli(['oidc', ...args, '--data-dir', dir, '--json']);

describe('gatehouse oidc', () => {
  it('init made the signing keys (RS256 and ES256, signing)', async () => {
    const res = await oidc(['keys', 'list']);
    expect(res.code, res.stderr).toBe(0);
    const states = json(res).keys.map((k: { alg: string; state: string }) => `${k.alg}:${k.state}`);
    expect(states.sort()).toEqual(['ES256:signing', 'RS256:signing']);
  });

  it('adds a client (the secret once), lists, shows, updates, rotates its secret and removes it', async () => {
    const add = await oidc(['client', 'add', '--name', 'demo', '--redirect-uri', 'http://localhost:9999/cb']);
    expect(add.code, add.stderr).toBe(0);
    const { client_id, client_secret } = json(add);
    expect(client_id).toMatch(/^gh_/);
    expect(client_secret).toMatch(/^[\w-]{43}$/);
    const list = await oidc(['client', 'list']);
    expect(list.stdout).not.toContain(client_secret);
    expect(json(list).clients.map((c: { client_id: string }) => c.client_id)).toContain(client_id);
    expect(json(await oidc(['client', 'show', client_id])).client).toMatchObject({
      name: 'demo',
      public: false,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const upd = await oidc(['client', 'update', client_id, '--first-party', '--redirect-uri', 'https://app.example.test/cb']);
    expect(json(upd).client).toMatchObject({ first_party: true, redirect_uris: ['https://app.example.test/cb'] });
    const rot = await oidc(['client', 'rotate-secret', client_id]);
    expect(json(rot).client_secret).not.toBe(client_secret);
    expect((await oidc(['client', 'remove', client_id])).code).toBe(0);
    expect((await oidc(['client', 'show', client_id])).code).toBe(1);
  });

  it('--keep-session-on-logout: set at add, cleared and set again at update', async () => {
    const add = await oidc(['client', 'add', '--name', 'wiki', '--redirect-uri', 'http://localhost:9999/cb', '--keep-session-on-logout']);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add).client.keep_session_on_logout).toBe(true);
    const id = json(add).client_id as string;
    expect(json(await oidc(['client', 'update', id, '--no-keep-session-on-logout'])).client.keep_session_on_logout).toBe(false);
    // An update that does not name the flag leaves it as it is.
    expect(json(await oidc(['client', 'update', id, '--name', 'Wiki'])).client.keep_session_on_logout).toBe(false);
    expect(json(await oidc(['client', 'update', id, '--keep-session-on-logout'])).client.keep_session_on_logout).toBe(true);
    const plain = await oidc(['client', 'add', '--name', 'plain', '--redirect-uri', 'http://localhost:9999/cb']);
    expect(json(plain).client.keep_session_on_logout).toBe(false);
  });

  it('a public client has no secret', async () => {
    const add = await oidc(['client', 'add', '--name', 'spa', '--redirect-uri', 'http://127.0.0.1:3000/cb', '--public']);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add)).toMatchObject({ client_secret: null, client: { public: true, token_endpoint_auth_method: 'none' } });
  });

  it('--grant device_code lets a client use the device flow (RFC 8628); update --drop-grant takes it away; another grant is exit 2', async () => {
    const add = await oidc(['client', 'add', '--name', 'tv', '--redirect-uri', 'http://localhost/cb', '--public', '--grant', 'device_code']);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add).client).toMatchObject({ device_flow: true, grant_types: expect.arrayContaining(['urn:ietf:params:oauth:grant-type:device_code']) });
    const id = json(add).client_id as string;
    expect(json(await oidc(['client', 'update', id, '--name', 'TV'])).client.device_flow).toBe(true);
    const dropped = json(await oidc(['client', 'update', id, '--drop-grant', 'device_code'])).client;
    expect(dropped.device_flow).toBe(false);
    expect(dropped.grant_types).not.toContain('urn:ietf:params:oauth:grant-type:device_code');
    expect(json(await oidc(['client', 'update', id, '--grant', 'device_code'])).client.device_flow).toBe(true);
    const bad = await oidc(['client', 'add', '--name', 'x', '--redirect-uri', 'http://localhost/cb', '--grant', 'implicit']);
    expect(bad.code).toBe(2);
  });

  it('refuses bad redirect URIs and a missing one with exit 2', async () => {
    for (const args of [
      ['client', 'add', '--name', 'x', '--redirect-uri', 'http://app.example.test/cb'],
      ['client', 'add', '--name', 'x', '--redirect-uri', 'https://*.example.test/cb'],
      ['client', 'add', '--name', 'x'],
      ['client', 'add', '--name', 'x', '--redirect-uri', 'https://a.example.test/cb', '--token-auth', 'jwt'],
    ]) {
      const res = await oidc(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(json(res)).toMatchObject({ success: false });
    }
  });

  it('says what is wrong with the input once: each bad field named once, on one error line', async () => {
    const one = await runCli(['oidc', 'client', 'add', '--name', 'x', '--redirect-uri', 'ftp://bad.example.test/cb', '--data-dir', dir]);
    expect(one.code).toBe(2);
    const errors = one.stderr.split('\n').filter((l) => l.startsWith('error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0].match(/redirect_uris\.0/g)).toHaveLength(1);

    const two = await runCli([
      'oidc',
      'client',
      'add',
      '--name',
      'x',
      '--redirect-uri',
      'ftp://a.example.test/cb',
      '--redirect-uri',
      'ftp://b.example.test/cb',
      '--data-dir',
      dir,
    ]);
    expect(two.code).toBe(2);
    const line = two.stderr.split('\n').find((l) => l.startsWith('error:'))!;
    expect(line.match(/redirect_uris\.0/g)).toHaveLength(1);
    expect(line.match(/redirect_uris\.1/g)).toHaveLength(1);
  });

  it('keys rotate publishes new keys that sign after the grace period; doctor checks the provider', async () => {
    const rot = await oidc(['keys', 'rotate', '--grace', '1h']);
    expect(rot.code, rot.stderr).toBe(0);
    expect(json(rot).kids).toHaveLength(2);
    const states = json(await oidc(['keys', 'list'])).keys.map((k: { state: string }) => k.state);
    expect(states.filter((s: string) => s === 'pending')).toHaveLength(2);
    expect(states.filter((s: string) => s === 'signing')).toHaveLength(2);
    const doctor = await runCli(['doctor', '--data-dir', dir, '--json']);
    const check = json(doctor).checks.find((c: { id: string }) => c.id === 'oidc');
    expect(check).toMatchObject({ status: 'ok' });
  });

  it('--no-pkce registers a confidential legacy client without PKCE, which the doctor names; never a public one; --pkce requires it again', async () => {
    const add = await oidc(['client', 'add', '--name', 'legacy', '--redirect-uri', 'https://legacy.example.test/cb', '--no-pkce']);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add).client.pkce_required).toBe(false);
    const id = json(add).client_id as string;
    const doctor = await runCli(['doctor', '--data-dir', dir, '--json']);
    const check = json(doctor).checks.find((c: { id: string }) => c.id === 'oidc');
    expect(check).toMatchObject({ status: 'warn' });
    expect(check.message).toContain(id);
    expect(check.message).toContain('without PKCE');
    const pub = await oidc(['client', 'add', '--name', 'spa', '--redirect-uri', 'http://127.0.0.1:3000/cb', '--public', '--no-pkce']);
    expect(pub.code).toBe(2);
    expect(json(pub).error).toMatch(/PKCE/);
    expect(json(await oidc(['client', 'update', id, '--pkce'])).client.pkce_required).toBe(true);
    const again = await runCli(['doctor', '--data-dir', dir, '--json']);
    expect(json(again).checks.find((c: { id: string }) => c.id === 'oidc')).toMatchObject({ status: 'ok' });
  });

  it('oidc resource add|list|show|update|remove, and a client allowed and disallowed an API', async () => {
    const api = 'https://api.example.test';
    const add = await oidc([
      'resource',
      'add',
      '--identifier',
      api,
      '--name',
      'Things',
      '--scope',
      'read:things',
      '--scope',
      'write:things',
      '--access-token-ttl',
      '10m',
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add).resource).toMatchObject({ identifier: api, scopes: ['read:things', 'write:things'], access_token_ttl: 600 });
    expect(json(await oidc(['resource', 'list'])).resources).toHaveLength(1);
    expect(json(await oidc(['resource', 'update', api, '--scope', 'read:things'])).resource.scopes).toEqual(['read:things']);
    expect(json(await oidc(['resource', 'show', api])).resource.name).toBe('Things');
    for (const args of [
      ['resource', 'add', '--identifier', 'http://api.example.test', '--name', 'x', '--scope', 'a'],
      ['resource', 'add', '--identifier', 'https://b.example.test', '--name', 'x'],
      ['resource', 'add', '--identifier', 'https://b.example.test', '--name', 'x', '--scope', 'a', '--access-token-ttl', 'soon'],
    ]) {
      const res = await oidc(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(json(res)).toMatchObject({ success: false });
    }
    const client = json(await oidc(['client', 'add', '--name', 'api-user', '--redirect-uri', 'http://localhost:9999/cb', '--allow-resource', api]));
    expect(client.client.allowed_resources).toEqual([api]);
    const id = client.client_id as string;
    expect(json(await oidc(['client', 'update', id, '--disallow-resource', api])).client.allowed_resources).toEqual([]);
    expect(json(await oidc(['client', 'update', id, '--allow-resource', api])).client.allowed_resources).toEqual([api]);
    const unknown = await oidc(['client', 'update', id, '--allow-resource', 'https://unknown.example.test']);
    expect(unknown.code).toBe(2);
    expect(json(await oidc(['resource', 'remove', api])).success).toBe(true);
    expect(json(await oidc(['client', 'show', id])).client.allowed_resources).toEqual([]);
    expect((await oidc(['resource', 'show', api])).code).toBe(1);
  });

  it('--id-token-alg: ES256 at add, RS256 again at update; anything else exits 2', async () => {
    const add = await oidc(['client', 'add', '--name', 'es', '--redirect-uri', 'http://localhost:9999/cb', '--id-token-alg', 'es256']);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add).client.id_token_alg).toBe('ES256');
    const id = json(add).client_id as string;
    expect(json(await oidc(['client', 'update', id, '--id-token-alg', 'RS256'])).client.id_token_alg).toBe('RS256');
    const bad = await oidc(['client', 'add', '--name', 'hs', '--redirect-uri', 'http://localhost:9999/cb', '--id-token-alg', 'HS256']);
    expect(bad.code).toBe(2);
    expect(json(bad).error).toMatch(/--id-token-alg/);
  });

  it('--token-auth private_key_jwt --jwks-file registers public keys and no secret; update replaces them; a private key or no file exits 2', async () => {
    const keyFile = (name: string, withPrivate = false) => {
      const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwk = { ...(withPrivate ? privateKey : publicKey).export({ format: 'jwk' }), kid: name, alg: 'ES256', use: 'sig' };
      const path = join(dir, `${name}.json`);
      writeFileSync(path, JSON.stringify({ keys: [jwk] }));
      return path;
    };
    const cb = ['--redirect-uri', 'http://localhost:9999/cb'];
    const add = await oidc(['client', 'add', '--name', 'keyed', ...cb, '--token-auth', 'private_key_jwt', '--jwks-file', keyFile('k1')]);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add)).toMatchObject({ client_secret: null, client: { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kid: 'k1' }] } } });
    const id = json(add).client_id as string;
    expect(json(await oidc(['client', 'update', id, '--jwks-file', keyFile('k2')])).client.jwks.keys.map((k: { kid: string }) => k.kid)).toEqual(['k2']);
    const rotate = await oidc(['client', 'rotate-secret', id]);
    expect(rotate.code).toBe(2);
    expect(json(rotate).error).toMatch(/private_key_jwt/);
    const leaked = await oidc(['client', 'add', '--name', 'leaked', ...cb, '--token-auth', 'private_key_jwt', '--jwks-file', keyFile('k3', true)]);
    expect(leaked.code).toBe(2);
    expect(JSON.stringify(json(leaked))).toMatch(/private key material \(d\)/);
    const missing = await oidc(['client', 'add', '--name', 'none', ...cb, '--token-auth', 'private_key_jwt', '--jwks-file', join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(json(missing).error).toMatch(/--jwks-file: cannot read/);
    const hs = await oidc(['client', 'add', '--name', 'hs', ...cb, '--token-auth', 'client_secret_jwt']);
    expect(hs.code).toBe(2);
    expect(json(hs).error).toMatch(/client_secret_jwt is not offered/);
  });
});
