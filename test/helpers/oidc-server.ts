import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { createBrowser } from './browser.js';

/**
 * A real OpenID provider (the oidc-provider package) standing in for Google, Microsoft and Apple
 * through the endpoint overrides. Its issuer has a tenant path and its tokens a `tid` claim, so
 * Microsoft's tenant issuer rule is exercised; Apple's client gets string booleans, and Apple's token
 * endpoint is fronted by a small check of the ES256 client secret Apple requires (as Apple does)
 * before the request is handed to the provider with the client's registered secret.
 */

export const TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

export interface OidcAccount {
  sub: string;
  email: string | null;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
  picture?: string;
}

export interface OidcClientDef {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

export interface OidcServer {
  origin: string;
  issuer: string;
  /** Endpoint overrides for SOCIAL_AUTH (token: `appleToken` for Apple). */
  endpoints: { authorization: string; token: string; userinfo: string; jwks: string; issuer: string };
  appleToken: string;
  /** The Apple key the test configures (PKCS#8 PEM) and its ids. */
  apple: { teamId: string; keyId: string; privateKeyPem: string };
  setAccount(a: OidcAccount): void;
  /** Signs with the provider's own key: for tokens a test shapes by hand (expired, wrong issuer…). */
  sign(claims: Record<string, unknown>, opts?: { expiresIn?: number; iat?: number }): Promise<string>;
  /** A real id_token from a real code flow for `clientId` (the mobile apps' case). */
  idTokenFor(clientId: string, sub: string, nonce?: string): Promise<string>;
  /** Apple token requests the front check refused (a client secret that is not a valid ES256 JWT of the team). */
  appleRefusals: number;
  close(): Promise<void>;
}

const MOBILE_REDIRECT = 'http://mobile.test/cb';

export async function startOidcServer(clients: OidcClientDef[], appleClientId: string): Promise<OidcServer> {
  const accounts = new Map<string, OidcAccount>();
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingJwk = { ...(await exportJWK(privateKey)), kid: 'test-rsa-1', alg: 'RS256', use: 'sig' } as JWK;
  const apple = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const appleKey = { teamId: 'TEAM123456', keyId: 'KEY1234567', privateKeyPem: apple.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  const applePublic = apple.publicKey;

  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const prefix = `/${TENANT}`;
  const issuer = `${origin}${prefix}`;

  const allClients = [
    ...clients.map((c) => ({ ...c, redirect_uris: [...c.redirect_uris, MOBILE_REDIRECT], response_types: ['code'], grant_types: ['authorization_code'] })),
  ];
  const provider = new Provider(issuer, {
    clients: allClients,
    jwks: { keys: [signingJwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub', 'tid'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'picture'] },
    conformIdTokenClaims: false,
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 600, Session: 600 },
    features: { devInteractions: { enabled: true } },
    responseTypes: ['code'],
    pkce: { required: () => false },
    // oidc-provider's context objects (Koa): only what is read here.
    async findAccount(ctx: any, sub: string) {
      const a = accounts.get(sub);
      if (!a) return undefined;
      const isApple = ctx.oidc.client?.clientId === appleClientId;
      return {
        accountId: sub,
        async claims() {
          const verified = a.email_verified ?? false;
          return {
            sub,
            tid: TENANT,
            ...(a.email ? { email: a.email, email_verified: isApple ? String(verified) : verified } : {}),
            ...(a.given_name ? { given_name: a.given_name, name: `${a.given_name} ${a.family_name ?? ''}`.trim() } : {}),
            ...(a.family_name ? { family_name: a.family_name } : {}),
            ...(a.picture ? { picture: a.picture } : {}),
          };
        },
      };
    },
    // Consent is given once and for all: the sign-in is what the tests exercise.
    async loadExistingGrant(ctx: any) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      grant.addOIDCClaims(['email', 'email_verified', 'name', 'given_name', 'family_name', 'picture', 'tid']);
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  let appleRefusals = 0;
  const registeredAppleSecret = clients.find((c) => c.client_id === appleClientId)?.client_secret ?? '';

  async function appleToken(req: http.IncomingMessage, res: http.ServerResponse) {
    let body = '';
    for await (const c of req) body += c;
    const form = new URLSearchParams(body);
    try {
      const key = await importJWK(await exportJWK(applePublic), 'ES256');
      const { protectedHeader } = await jwtVerify(form.get('client_secret') ?? '', key, {
        issuer: appleKey.teamId,
        subject: appleClientId,
        audience: issuer,
        algorithms: ['ES256'],
      });
      if (protectedHeader.kid !== appleKey.keyId || form.get('client_id') !== appleClientId) throw new Error('wrong key or client');
    } catch {
      appleRefusals++;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_client' }));
      return;
    }
    form.set('client_secret', registeredAppleSecret);
    const r = await fetch(`${issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
    res.end(await r.text());
  }

  server.on('request', (req, res) => {
    if (req.url === '/apple/auth/token' && req.method === 'POST') {
      appleToken(req, res).catch(() => res.end());
      return;
    }
    const full = req.url ?? '/';
    if (full.startsWith(prefix)) {
      (req as http.IncomingMessage & { originalUrl?: string }).originalUrl = full;
      req.url = full.slice(prefix.length) || '/';
    }
    handle(req, res);
  });

  const signKey = await importJWK(signingJwk, 'RS256');
  const out: OidcServer = {
    origin,
    issuer,
    endpoints: { authorization: `${issuer}/auth`, token: `${issuer}/token`, userinfo: `${issuer}/me`, jwks: `${issuer}/jwks`, issuer },
    appleToken: `${origin}/apple/auth/token`,
    apple: appleKey,
    setAccount: (a) => void accounts.set(a.sub, a),
    get appleRefusals() {
      return appleRefusals;
    },
    async sign(claims, opts = {}) {
      const iat = opts.iat ?? Math.floor(Date.now() / 1000);
      return new SignJWT({ tid: TENANT, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'test-rsa-1' })
        .setIssuedAt(iat)
        .setExpirationTime(iat + (opts.expiresIn ?? 600))
        .sign(signKey);
    },
    async idTokenFor(clientId, sub, nonce) {
      const client = allClients.find((c) => c.client_id === clientId)!;
      const browser = createBrowser(['http://mobile.test'], {}, { login: sub, password: 'x' });
      const verifier = randomBytes(32).toString('base64url');
      const auth = new URL(`${issuer}/auth`);
      const params: Record<string, string> = {
        client_id: clientId,
        response_type: 'code',
        scope: 'openid email profile',
        redirect_uri: MOBILE_REDIRECT,
        state: randomBytes(8).toString('hex'),
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        ...(nonce ? { nonce } : {}),
      };
      for (const [k, v] of Object.entries(params)) auth.searchParams.set(k, v);
      const landing = await browser.go(auth.toString());
      const code = landing.url.searchParams.get('code');
      if (!code) throw new Error(`no code: ${landing.text.slice(0, 300)}`);
      const r = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: MOBILE_REDIRECT,
          code_verifier: verifier,
          client_id: clientId,
          client_secret: client.client_secret,
        }).toString(),
      });
      const j = (await r.json()) as { id_token?: string };
      if (!j.id_token) throw new Error(`no id_token: ${JSON.stringify(j)}`);
      return j.id_token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return out;
}
