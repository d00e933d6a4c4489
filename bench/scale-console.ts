import type pg from 'pg';
import { ADMIN_TOKEN } from './scale-seed.js';

/**
 * The admin console at scale (`npm run bench:scale`, issue 27): each page over HTTP with the bench
 * superadmin's session cookie, as a browser sends it (GETs need the session only; the console's
 * Strict CSRF cookie matters for posts). Each page beside the JSON API route it mirrors where there is
 * one (the same service call without the HTML), so `page ÷ API` is what rendering adds.
 */

/** One measured page: `page(i)` fetches it; `api(i)`, when given, the API route it mirrors. */
export type ConsoleMeasure = (operation: string, page: (i: number) => Promise<unknown>, api?: (i: number) => Promise<unknown>) => Promise<void>;

export interface ConsoleClient {
  /** GET a console page (HTML, 200 expected); returns its text. */
  page(pathAndQuery: string): Promise<string>;
  /** GET an admin API route (JSON, 200 expected). */
  api(pathAndQuery: string): Promise<any>;
}

export function consoleClient(baseUrl: string): ConsoleClient {
  const cookie = `session_id=${ADMIN_TOKEN}`;
  return {
    async page(p) {
      const r = await fetch(`${baseUrl}${p}`, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' });
      const text = await r.text();
      if (r.status !== 200 || !/text\/html/.test(r.headers.get('content-type') ?? '')) {
        throw new Error(`GET ${p} answered ${r.status} ${r.headers.get('location') ?? ''}: ${text.slice(0, 300)}`);
      }
      return text;
    },
    async api(p) {
      const r = await fetch(`${baseUrl}${p}`, { headers: { 'X-Session-ID': ADMIN_TOKEN } });
      const body = await r.json();
      if (r.status !== 200) throw new Error(`GET ${p} answered ${r.status}: ${JSON.stringify(body).slice(0, 300)}`);
      return body;
    },
  };
}

/**
 * Passkeys for every tenth seeded user (two each), so a user's page lists some: set-based, after the
 * passkeys module is installed (its table exists then). Returns how many rows went in.
 */
export async function seedPasskeys(db: pg.Client, users: number, note: (s: string) => void): Promise<number> {
  const owners = Math.floor(users / 10);
  note(`seeding ${(owners * 2).toLocaleString('en-US')} passkeys (two for every tenth user)`);
  const r = await db.query(
    `INSERT INTO passkey_credentials (id, user_id, credential_id, public_key, counter, transports, device_type, backed_up, aaguid, name, created_at, last_used_at)
     SELECT md5('pk' || k || '-' || j)::uuid::text, md5('u' || (k * 10))::uuid::text, 'bench-cred-' || k || '-' || j,
            'pQECAyYgASFYIBench', 0, 'internal', 'multiDevice', true, NULL, 'Bench key ' || j, now() - interval '30 days', NULL
       FROM generate_series(1, $1::int) k, generate_series(1, 2) j`,
    [owners],
  );
  await db.query('ANALYZE passkey_credentials');
  return r.rowCount ?? 0;
}

const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

export interface ConsoleCases {
  users: number;
  /** The id of seeded user n (1-based), as the seeding made it. */
  userId: (n: number) => string;
  /** A search matching a few users, for sample i. */
  few: (i: number) => string;
  /** Searches matching many users (each measured alone). */
  many: string[];
  /** Whether users with n % 10 = 0 have passkeys, sessions and events (the first seeding). */
  rich: boolean;
}

/**
 * The console's pages: the dashboard; the users list (first page, a search matching few, searches
 * matching many, the search-as-you-type fragment, a deep keyset page); a user's page; the audit
 * explorer (no filter, a type family, one user, a one-day window, a deep cursor).
 */
export async function consolePages(c: ConsoleClient, db: pg.Client, cases: ConsoleCases, measure: ConsoleMeasure, withAudit: boolean): Promise<string[]> {
  const notes: string[] = [];
  const enc = encodeURIComponent;
  await measure('GET /admin (dashboard)', () => c.page('/admin'));
  await measure(
    'GET /admin/users (first page)',
    () => c.page('/admin/users'),
    () => c.api('/auth/admin/users?limit=25'),
  );
  await measure(
    'GET /admin/users?q=<few matches>',
    (i) => c.page(`/admin/users?q=${enc(cases.few(i))}`),
    (i) => c.api(`/auth/admin/users?limit=25&q=${enc(cases.few(i))}`),
  );
  await measure(
    'GET /admin/users?q=<few>&fragment=1 (search as you type)',
    (i) => c.page(`/admin/users?fragment=1&q=${enc(cases.few(i))}`),
    (i) => c.api(`/auth/admin/users?limit=25&q=${enc(cases.few(i))}`),
  );
  for (const term of cases.many) {
    await measure(
      `GET /admin/users?q=${term}`,
      () => c.page(`/admin/users?q=${enc(term)}`),
      () => c.api(`/auth/admin/users?limit=25&q=${enc(term)}`),
    );
    const r = await c.api(`/auth/admin/users?limit=25&q=${enc(term)}`);
    notes.push(`q=${term}: total ${Number(r.meta.total).toLocaleString('en-US')} (exact: ${r.meta.total_exact})`);
  }
  // A deep keyset page: the cursor after 80 % of the listing (the console pages by cursor only).
  const deepPage = Math.max(2, Math.floor((cases.users * 0.8) / 25));
  const cursor = (await c.api(`/auth/admin/users?limit=25&page=${deepPage}`)).meta.next_cursor as string;
  await measure(
    `GET /admin/users?cursor=<after row ${(deepPage * 25).toLocaleString('en-US')}>`,
    () => c.page(`/admin/users?cursor=${enc(cursor)}`),
    () => c.api(`/auth/admin/users?limit=25&cursor=${enc(cursor)}`),
  );
  // Users with passkeys, sessions and events on the first seeding (every tenth user).
  const pick = (i: number) => cases.userId(10 * (1 + ((i * 7919 + 13) % Math.max(1, Math.floor(cases.users / 10)))));
  await measure(
    `GET /admin/users/:id (${cases.rich ? 'sessions, events, passkeys' : 'no sessions or events'})`,
    (i) => c.page(`/admin/users/${pick(i)}`),
    (i) => c.api(`/auth/admin/users/${pick(i)}`),
  );
  const sample = await c.page(`/admin/users/${pick(1)}`);
  notes.push(
    `a user's page: ${(sample.match(/\/sessions\/[^/"]+\/revoke/g) ?? []).length} live sessions, ${(sample.match(/data-passkey=/g) ?? []).length} passkeys, ${Math.round(sample.length / 1024)} kB of HTML`,
  );
  if (!withAudit) return notes;
  await measure(
    'GET /admin/audit (no filter)',
    () => c.page('/admin/audit'),
    () => c.api('/auth/admin/audit-events'),
  );
  await measure(
    'GET /admin/audit?type=sign_in.* (a family, 65 %)',
    () => c.page('/admin/audit?type=sign_in.*'),
    () => c.api('/auth/admin/audit-events?type=sign_in.*'),
  );
  await measure(
    'GET /admin/audit?type=two_factor.* (a family, 1 %)',
    () => c.page('/admin/audit?type=two_factor.*'),
    () => c.api('/auth/admin/audit-events?type=two_factor.*'),
  );
  const someone = (i: number) => cases.userId(1 + ((i * 104729 + 17) % cases.users));
  await measure(
    'GET /admin/audit?user_id=<a user>',
    (i) => c.page(`/admin/audit?user_id=${someone(i)}`),
    (i) => c.api(`/auth/admin/audit-events?user_id=${someone(i)}`),
  );
  const day = (i: number) => new Date(Date.now() - (5 + ((i * 37) % 350)) * 86_400_000);
  const window = (i: number) => `since=${enc(day(i).toISOString())}&until=${enc(new Date(day(i).getTime() + 86_400_000).toISOString())}`;
  await measure(
    'GET /admin/audit?since=…&until=… (one day, 5 to 355 days ago)',
    (i) => c.page(`/admin/audit?${window(i)}`),
    (i) => c.api(`/auth/admin/audit-events?${window(i)}`),
  );
  // The cursor page 1,001 carries (the last id of page 1,000, pages of 50).
  const deep = (await db.query<{ id: string }>('SELECT id FROM audit_events ORDER BY id DESC OFFSET 49999 LIMIT 1')).rows[0]?.id;
  if (deep) {
    await measure(
      'GET /admin/audit?cursor=<page 1,001>',
      () => c.page(`/admin/audit?cursor=${cursorOf(deep)}`),
      () => c.api(`/auth/admin/audit-events?cursor=${cursorOf(deep)}`),
    );
  }
  return notes;
}
