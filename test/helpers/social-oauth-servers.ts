import { createHash, createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Local stand-ins for GitHub, Discord and Facebook: their OAuth authorize and token endpoints, user
 * APIs and app-binding token checks, answering with the real services' response shapes. The authorize
 * endpoint consents at once for the user set with `nextUser`.
 */

export const APPS = {
  github: { clientId: 'Iv1.gh0000client', secret: 'gh-secret-0123456789' },
  discord: { clientId: '1100000000000000001', secret: 'dc-secret-0123456789' },
  facebook: { clientId: '2200000000000001', secret: 'fb-secret-0123456789' },
} as const;
export type OAuthProvider = keyof typeof APPS;

export interface FakeUser {
  id: string;
  email: string | null;
  verified?: boolean;
  name?: string;
  /** GitHub: a second, non-primary address. */
  otherEmail?: string;
  avatar?: string | null;
}

interface Grant {
  provider: OAuthProvider;
  user: FakeUser;
  clientId: string;
  redirectUri: string;
  challenge: string | null;
}

export interface OAuthServers {
  url: string;
  /** The user the next authorize request consents for. */
  nextUser(provider: OAuthProvider, user: FakeUser): void;
  /** An access token as the provider would issue it, to `appId` (another app's id for a token that is not ours). */
  mint(provider: OAuthProvider, user: FakeUser, appId?: string): string;
  /** 'down' answers 500 everywhere; 'hang' never answers. */
  mode(provider: OAuthProvider, m: 'ok' | 'down' | 'hang'): void;
  /** Token endpoint requests seen (form fields and whether basic auth was used). */
  tokenRequests: { provider: OAuthProvider; form: Record<string, string>; basic: boolean }[];
  /** Endpoint overrides for SOCIAL_AUTH. */
  endpoints(provider: OAuthProvider): Record<string, string>;
  close(): Promise<void>;
}

const b64url = (b: Buffer) => b.toString('base64url');

export async function startOAuthServers(): Promise<OAuthServers> {
  const next = new Map<OAuthProvider, FakeUser>();
  const modes = new Map<OAuthProvider, 'ok' | 'down' | 'hang'>();
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, { provider: OAuthProvider; user: FakeUser; appId: string }>();
  const tokenRequests: OAuthServers['tokenRequests'] = [];
  const hanging = new Set<http.ServerResponse>();

  const mint = (provider: OAuthProvider, user: FakeUser, appId: string = APPS[provider].clientId) => {
    const prefix = provider === 'github' ? 'gho_' : provider === 'facebook' ? 'EAAB' : '';
    const t = prefix + b64url(randomBytes(24));
    tokens.set(t, { provider, user, appId });
    return t;
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };

  const readBody = (req: http.IncomingMessage) =>
    new Promise<string>((resolve) => {
      let s = '';
      req.on('data', (c) => (s += c));
      req.on('end', () => resolve(s));
    });

  function clientOf(req: http.IncomingMessage, form: Record<string, string>): { id: string; secret: string; basic: boolean } {
    const h = req.headers.authorization;
    if (h?.startsWith('Basic ')) {
      const [id, secret] = Buffer.from(h.slice(6), 'base64').toString().split(':').map(decodeURIComponent);
      return { id: id ?? '', secret: secret ?? '', basic: true };
    }
    return { id: form.client_id ?? '', secret: form.client_secret ?? '', basic: false };
  }

  const bearerUser = (req: http.IncomingMessage, provider: OAuthProvider, query?: URLSearchParams) => {
    const h = req.headers.authorization;
    const t = h?.startsWith('Bearer ') ? h.slice(7) : (query?.get('access_token') ?? '');
    const rec = tokens.get(t);
    return rec && rec.provider === provider ? { ...rec, token: t } : null;
  };

  function authorize(provider: OAuthProvider, q: URLSearchParams, res: http.ServerResponse) {
    const user = next.get(provider);
    const redirect = q.get('redirect_uri');
    if (!user || !redirect || q.get('client_id') !== APPS[provider].clientId) return json(res, 400, { error: 'invalid_request' });
    const code = b64url(randomBytes(16));
    codes.set(code, {
      provider,
      user,
      clientId: q.get('client_id')!,
      redirectUri: redirect,
      challenge: q.get('code_challenge_method') === 'S256' ? q.get('code_challenge') : null,
    });
    const to = new URL(redirect);
    to.searchParams.set('code', code);
    to.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { location: to.toString() });
    res.end();
  }

  async function token(provider: OAuthProvider, req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams) {
    const form = Object.fromEntries(new URLSearchParams(req.method === 'POST' ? await readBody(req) : q.toString()));
    const client = clientOf(req, form);
    tokenRequests.push({ provider, form, basic: client.basic });
    const grant = codes.get(form.code ?? '');
    codes.delete(form.code ?? '');
    const app = APPS[provider];
    const verifierOk = grant?.challenge
      ? b64url(
          createHash('sha256')
            .update(form.code_verifier ?? '')
            .digest(),
        ) === grant.challenge
      : false;
    const ok =
      grant &&
      grant.provider === provider &&
      client.id === app.clientId &&
      client.secret === app.secret &&
      grant.redirectUri === form.redirect_uri &&
      verifierOk;
    if (!ok) {
      if (provider === 'github')
        return json(res, 200, {
          error: 'bad_verification_code',
          error_description: 'The code passed is incorrect or expired.',
          error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code',
        });
      if (provider === 'facebook')
        return json(res, 400, { error: { message: 'Invalid verification code format.', type: 'OAuthException', code: 100, fbtrace_id: 'AbCdEf' } });
      return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid "code" in request.' });
    }
    const access = mint(provider, grant.user);
    if (provider === 'github') return json(res, 200, { access_token: access, token_type: 'bearer', scope: 'read:user,user:email' });
    if (provider === 'discord')
      return json(res, 200, {
        access_token: access,
        token_type: 'Bearer',
        expires_in: 604800,
        refresh_token: b64url(randomBytes(20)),
        scope: 'identify email',
      });
    return json(res, 200, { access_token: access, token_type: 'bearer', expires_in: 5183944 });
  }

  const githubUser = (u: FakeUser) => ({
    login: `octo${u.id}`,
    id: Number(u.id),
    node_id: `MDQ6VXNlcj${u.id}`,
    avatar_url: u.avatar ?? `https://avatars.githubusercontent.com/u/${u.id}?v=4`,
    html_url: `https://github.com/octo${u.id}`,
    type: 'User',
    site_admin: false,
    name: u.name ?? null,
    company: null,
    email: null,
    created_at: '2020-01-01T00:00:00Z',
  });
  const discordUser = (u: FakeUser) => ({
    id: u.id,
    username: `user${u.id.slice(-4)}`,
    discriminator: '0',
    global_name: u.name ?? null,
    avatar: u.avatar === undefined ? 'a1b2c3d4e5f60718293a4b5c6d7e8f90' : u.avatar,
    mfa_enabled: false,
    locale: 'en-US',
    flags: 0,
    premium_type: 0,
    public_flags: 0,
    email: u.email,
    verified: u.verified ?? false,
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [, provider, ...rest] = url.pathname.split('/');
    const p = provider as OAuthProvider;
    if (!(p in APPS)) return json(res, 404, { message: 'Not Found' });
    const mode = modes.get(p) ?? 'ok';
    if (mode === 'hang') return void hanging.add(res);
    if (mode === 'down') return json(res, 500, { message: 'Internal Server Error' });
    const path = `/${rest.join('/')}`;
    const q = url.searchParams;
    if (p === 'github') {
      if (path === '/login/oauth/authorize') return authorize(p, q, res);
      if (path === '/login/oauth/access_token') return token(p, req, res, q);
      if (path === '/user' || path === '/user/emails') {
        const who = bearerUser(req, p);
        if (!who) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
        if (path === '/user') return json(res, 200, githubUser(who.user));
        const list = [];
        if (who.user.email) list.push({ email: who.user.email, primary: true, verified: who.user.verified ?? false, visibility: 'private' });
        if (who.user.otherEmail) list.push({ email: who.user.otherEmail, primary: false, verified: true, visibility: null });
        return json(res, 200, list);
      }
      const m = /^\/applications\/([^/]+)\/token$/.exec(path);
      if (m && req.method === 'POST') {
        const client = clientOf(req, {});
        const body = JSON.parse((await readBody(req)) || '{}') as { access_token?: string };
        if (client.id !== decodeURIComponent(m[1]!) || client.secret !== APPS.github.secret || client.id !== APPS.github.clientId) {
          return json(res, 401, { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest', status: '401' });
        }
        const rec = tokens.get(body.access_token ?? '');
        if (!rec || rec.provider !== 'github' || rec.appId !== client.id)
          return json(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' });
        return json(res, 200, {
          id: 1,
          url: `https://api.github.com/authorizations/1`,
          app: { client_id: rec.appId, name: 'Gatehouse test', url: 'https://example.test' },
          token: body.access_token,
          hashed_token: createHash('sha256').update(body.access_token!).digest('hex'),
          token_last_eight: body.access_token!.slice(-8),
          note: null,
          scopes: ['read:user', 'user:email'],
          user: githubUser(rec.user),
        });
      }
    }
    if (p === 'discord') {
      if (path === '/oauth2/authorize') return authorize(p, q, res);
      if (path === '/api/oauth2/token') return token(p, req, res, q);
      const who = bearerUser(req, p);
      if (path === '/api/users/@me' || path === '/api/oauth2/@me') {
        if (!who) return json(res, 401, { message: '401: Unauthorized', code: 0 });
        if (path === '/api/users/@me') return json(res, 200, discordUser(who.user));
        const { email: _e, verified: _v, ...publicUser } = discordUser(who.user);
        return json(res, 200, {
          application: {
            id: who.appId,
            name: 'Gatehouse test',
            icon: null,
            description: '',
            hook: true,
            bot_public: false,
            bot_require_code_grant: false,
            verify_key: 'ab'.repeat(32),
            flags: 0,
          },
          scopes: ['identify', 'email'],
          expires: new Date(Date.now() + 604800_000).toISOString(),
          user: publicUser,
        });
      }
    }
    if (p === 'facebook') {
      if (path === '/v19.0/dialog/oauth') return authorize(p, q, res);
      if (path === '/v19.0/oauth/access_token') return token(p, req, res, q);
      if (path === '/v19.0/me') {
        const who = bearerUser(req, p, q);
        const proofOk = who && q.get('appsecret_proof') === createHmac('sha256', APPS.facebook.secret).update(who.token).digest('hex');
        if (!who || !proofOk)
          return json(res, 400, {
            error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190, fbtrace_id: 'AbCdEf' },
          });
        const [first, ...last] = (who.user.name ?? 'Face Book').split(' ');
        return json(res, 200, {
          id: who.user.id,
          name: who.user.name ?? 'Face Book',
          first_name: first,
          last_name: last.join(' '),
          ...(who.user.email ? { email: who.user.email } : {}),
          picture: {
            data: { height: 200, is_silhouette: false, url: `https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=${who.user.id}`, width: 200 },
          },
        });
      }
      if (path === '/v19.0/debug_token') {
        if (q.get('access_token') !== `${APPS.facebook.clientId}|${APPS.facebook.secret}`) {
          return json(res, 400, { error: { message: 'Invalid OAuth access token signature.', type: 'OAuthException', code: 190, fbtrace_id: 'AbCdEf' } });
        }
        const rec = tokens.get(q.get('input_token') ?? '');
        if (!rec || rec.provider !== 'facebook')
          return json(res, 200, { data: { error: { code: 190, message: 'Invalid OAuth access token.' }, is_valid: false, scopes: [] } });
        return json(res, 200, {
          data: {
            app_id: rec.appId,
            type: 'USER',
            application: 'Gatehouse test',
            data_access_expires_at: 1900000000,
            expires_at: 1900000000,
            is_valid: true,
            scopes: ['email', 'public_profile'],
            user_id: rec.user.id,
          },
        });
      }
    }
    return json(res, 404, { message: 'Not Found' });
  }

  const server = http.createServer((req, res) => {
    route(req, res).catch((err) => json(res, 500, { message: String(err) }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    nextUser: (p, u) => void next.set(p, u),
    mint,
    mode: (p, m) => void modes.set(p, m),
    tokenRequests,
    endpoints(p): Record<string, string> {
      if (p === 'github') {
        return {
          authorization: `${url}/github/login/oauth/authorize`,
          token: `${url}/github/login/oauth/access_token`,
          userinfo: `${url}/github/user`,
          emails: `${url}/github/user/emails`,
          token_check: `${url}/github/applications/${APPS.github.clientId}/token`,
        };
      }
      if (p === 'discord') {
        return {
          authorization: `${url}/discord/oauth2/authorize`,
          token: `${url}/discord/api/oauth2/token`,
          userinfo: `${url}/discord/api/users/@me`,
          token_check: `${url}/discord/api/oauth2/@me`,
        };
      }
      return {
        authorization: `${url}/facebook/v19.0/dialog/oauth`,
        token: `${url}/facebook/v19.0/oauth/access_token`,
        userinfo: `${url}/facebook/v19.0/me`,
        token_check: `${url}/facebook/v19.0/debug_token`,
      };
    },
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
