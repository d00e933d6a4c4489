import { QueryTypes } from 'sequelize';
import type { LinkedAccountRecord } from '../../src/social/account-repository.js';
import type { TestApp } from '../helpers/test-app.js';

export const FRONTEND = 'http://frontend.test';
export const RETURN_ORIGIN = 'https://app.example.test';
/** PUBLIC_URL of the social test apps: the redirect URI providers send the browser back to. */
export const PUBLIC = 'http://gatehouse.test';
export const PUBLIC_HOST = 'gatehouse.test';

/** Settings every social test app starts from; SOCIAL_AUTH is the test's own. */
export function socialEnv(auth: Record<string, unknown>, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PUBLIC_URL: PUBLIC,
    SOCIAL_LOGIN: 'true',
    SOCIAL_AUTH: JSON.stringify(auth),
    FRONTEND_URL: FRONTEND,
    SOCIAL_REDIRECT_ALLOWLIST: RETURN_ORIGIN,
    SOCIAL_PROVIDER_TIMEOUT_MS: '700',
    ...extra,
  };
}

export type AccountRow = LinkedAccountRecord;

export const accountsOf = (t: TestApp, where: { provider?: string; provider_user_id?: string; user_id?: string }) => {
  const keys = Object.keys(where);
  return t.app.sequelize.query<AccountRow>(`SELECT * FROM user_accounts${keys.length ? ' WHERE ' + keys.map((k) => `${k} = :${k}`).join(' AND ') : ''}`, {
    type: QueryTypes.SELECT,
    replacements: where,
  });
};

export const usersWithEmail = async (t: TestApp, email: string) =>
  (await t.app.sequelize.query<{ id: string }>('SELECT id FROM users WHERE email = :email', { type: QueryTypes.SELECT, replacements: { email } })).length;

export const countRows = async (t: TestApp, table: 'users' | 'user_accounts' | 'sessions') =>
  Number((await t.app.sequelize.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`, { type: QueryTypes.SELECT }))[0]!.n);

/** The session token a landing carried: the session_id cookie or the session_id parameter. */
export function sessionOf(landing: URL, cookie: string | undefined): string | null {
  return landing.searchParams.get('session_id') ?? cookie ?? null;
}
