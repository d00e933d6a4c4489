import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Set-based seeding for `npm run bench:scale`: users and sessions made by generate_series in one
 * INSERT each, with the tables' indexes and constraints dropped first and rebuilt after (building an
 * index once is far cheaper than growing it row by row), then VACUUM ANALYZE.
 */

export interface ScaleSizes {
  users: number;
  sessions: number;
  /** Sessions already expired, for the expiry job to delete in one run. */
  expired: number;
  /** Extra expired sessions deleted by the plain-SQL baseline before the job runs. */
  baselineExpired: number;
}

/** Session tokens are derivable, so the bench can present any seeded session: `ses_bench_<i>`. */
export const sessionToken = (i: number) => `ses_bench_${i}`;
export const ADMIN_TOKEN = 'ses_bench_admin';
const ADMIN_ID = 'bench-admin-0000-0000-000000000001';

/** The fields the bench searches on, as the seed makes them for user `i` (1-based). */
export const seededUser = (i: number) => ({
  id: uuidOf(`u${i}`),
  email: `user${i}.${md5(`e${i}`).slice(0, 6)}@example.com`,
  lastName: lastNameOf(i),
});

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
/** PostgreSQL's md5(s)::uuid::text. */
const uuidOf = (s: string) => md5(s).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
const LAST_FROM = '0123456789';
const LAST_TO = 'aeiouylmnr';
function lastNameOf(i: number): string {
  const raw = [...md5(`l${i}`).slice(0, 9)].map((c) => LAST_TO[LAST_FROM.indexOf(c)] ?? c).join('');
  return raw.charAt(0).toUpperCase() + raw.slice(1);
}

const FIRST_NAMES = [
  'Ana',
  'Ben',
  'Carla',
  'Dmitri',
  'Elena',
  'Farid',
  'Grace',
  'Hugo',
  'Ines',
  'Jonas',
  'Kira',
  'Luca',
  'Maya',
  'Nils',
  'Olga',
  'Pablo',
  'Quinn',
  'Rosa',
  'Sven',
  'Tara',
];

interface Saved {
  drop: string[];
  create: string[];
}

/** Every index and constraint of the tables, and the foreign keys pointing at them, as DROP and CREATE statements. */
export async function indexesAndConstraints(c: pg.Client, tables: string[]): Promise<Saved> {
  const fks = await c.query<{ tbl: string; name: string; def: string }>(
    `SELECT conrelid::regclass::text AS tbl, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE contype = 'f' AND (conrelid::regclass::text = ANY($1) OR confrelid::regclass::text = ANY($1))`,
    [tables],
  );
  const keys = await c.query<{ tbl: string; name: string; def: string }>(
    `SELECT conrelid::regclass::text AS tbl, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE contype IN ('p', 'u') AND conrelid::regclass::text = ANY($1)`,
    [tables],
  );
  const idx = await c.query<{ name: string; def: string }>(
    `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = ANY($1)
      AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE contype IN ('p', 'u'))`,
    [tables],
  );
  const q = (s: string) => `"${s}"`;
  return {
    drop: [
      ...fks.rows.map((r) => `ALTER TABLE ${r.tbl} DROP CONSTRAINT ${q(r.name)}`),
      ...keys.rows.map((r) => `ALTER TABLE ${r.tbl} DROP CONSTRAINT ${q(r.name)}`),
      ...idx.rows.map((r) => `DROP INDEX ${q(r.name)}`),
    ],
    create: [
      ...keys.rows.map((r) => `ALTER TABLE ${r.tbl} ADD CONSTRAINT ${q(r.name)} ${r.def}`),
      ...idx.rows.map((r) => r.def),
      ...fks.rows.map((r) => `ALTER TABLE ${r.tbl} ADD CONSTRAINT ${q(r.name)} ${r.def}`),
    ],
  };
}

/** Seeds users, sessions and one admin with a known session; `note` reports progress. */
export async function seed(c: pg.Client, sizes: ScaleSizes, note: (s: string) => void): Promise<{ seconds: number }> {
  const t0 = Date.now();
  await c.query("SET maintenance_work_mem = '512MB'");
  const saved = await indexesAndConstraints(c, ['users', 'sessions']);
  for (const sql of saved.drop) await c.query(sql);

  note(`seeding ${sizes.users.toLocaleString('en-US')} users`);
  await c.query(
    `INSERT INTO users (id, email, name, last_name, user_name, user_type, is_verified, two_factor, first_time, metadata, created_at, updated_at)
     SELECT md5('u' || i)::uuid::text,
            'user' || i || '.' || substr(md5('e' || i), 1, 6) || '@example.com',
            ($2::text[])[1 + i % ${FIRST_NAMES.length}],
            initcap(translate(substr(md5('l' || i), 1, 9), '${LAST_FROM}', '${LAST_TO}')),
            'user_' || i,
            CASE WHEN i % 50000 = 0 THEN 'admin' WHEN i % 1000 = 0 THEN 'writer' ELSE 'customer' END,
            i % 4 <> 0, false, true, '{}',
            timestamptz '2024-01-01 00:00:00+00' + i * interval '30 seconds',
            timestamptz '2024-01-01 00:00:00+00' + i * interval '30 seconds'
       FROM generate_series(1, $1::int) i`,
    [sizes.users, FIRST_NAMES],
  );
  await c.query(
    `INSERT INTO users (id, email, name, user_type, is_verified, two_factor, first_time, metadata, created_at, updated_at)
     VALUES ($1, 'admin@bench.example.test', 'Bench admin', 'superadmin', true, false, false, '{}', now(), now())`,
    [ADMIN_ID],
  );

  const total = sizes.sessions;
  const expiredUpTo = sizes.expired + sizes.baselineExpired;
  note(`seeding ${total.toLocaleString('en-US')} sessions (${expiredUpTo.toLocaleString('en-US')} expired)`);
  // In slices of a million rows, so progress shows and no single statement holds everything in memory.
  for (let from = 1; from <= total; from += 1_000_000) {
    const to = Math.min(total, from + 999_999);
    await c.query(
      `INSERT INTO sessions (id, token_hash, session_prefix, user_id, status, ip_address, user_agent, user_device,
                             two_factor_verified, created_at, last_used_at, expires_at)
       SELECT md5('s' || i)::uuid::text,
              encode(sha256(convert_to('ses_bench_' || i, 'UTF8')), 'hex'),
              left('ses_bench_' || i, 12),
              md5('u' || (1 + i % $3::int))::uuid::text,
              'active', '10.0.0.1', 'bench', 'Bench', false,
              now() - interval '8 days', now() - interval '1 day',
              CASE WHEN i <= $4::int THEN now() - interval '1 hour' - (i % 86400) * interval '1 second'
                   ELSE now() + interval '7 days' END
         FROM generate_series($1::int, $2::int) i`,
      [from, to, sizes.users, expiredUpTo],
    );
    note(`  sessions ${to.toLocaleString('en-US')} of ${total.toLocaleString('en-US')}`);
  }
  await c.query(
    `INSERT INTO sessions (id, token_hash, session_prefix, user_id, status, two_factor_verified, created_at, last_used_at, expires_at)
     VALUES ('bench-admin-session', encode(sha256(convert_to($1, 'UTF8')), 'hex'), left($1, 12), $2, 'active', true, now(), now(), now() + interval '7 days')`,
    [ADMIN_TOKEN, ADMIN_ID],
  );

  note(`rebuilding ${saved.create.length} indexes and constraints`);
  for (const sql of saved.create) await c.query(sql);
  note('VACUUM ANALYZE');
  await c.query('VACUUM ANALYZE users');
  await c.query('VACUUM ANALYZE sessions');
  return { seconds: Math.round((Date.now() - t0) / 100) / 10 };
}

/**
 * The plain seeding (issue 26): every user `user<N>@example.com`, `Name<N>`, `Last<N>`, user name
 * `user<N>`, one INSERT … SELECT … FROM generate_series, then ANALYZE (no VACUUM: as an operator's
 * import would leave it). User N is created N × 30 s after 2024-01-01, so newest first is highest N first. Replaces every user (TRUNCATE … CASCADE empties the tables that reference
 * users: sessions, tokens, accounts), then puts the bench admin and its session back.
 */
export async function seedPlain(c: pg.Client, users: number, note: (s: string) => void): Promise<{ seconds: number }> {
  const t0 = Date.now();
  await c.query("SET maintenance_work_mem = '512MB'");
  await c.query('TRUNCATE users CASCADE');
  const saved = await indexesAndConstraints(c, ['users']);
  for (const sql of saved.drop) await c.query(sql);
  note(`plain seeding: ${users.toLocaleString('en-US')} users user<N>@example.com, Name<N>, Last<N>`);
  await c.query(
    `INSERT INTO users (id, email, name, last_name, user_name, user_type, is_verified, two_factor, first_time, metadata, created_at, updated_at)
     SELECT md5('p' || i)::uuid::text, 'user' || i || '@example.com', 'Name' || i, 'Last' || i, 'user' || i,
            'customer', true, false, true, '{}',
            timestamptz '2024-01-01 00:00:00+00' + i * interval '30 seconds',
            timestamptz '2024-01-01 00:00:00+00' + i * interval '30 seconds'
       FROM generate_series(1, $1::int) i`,
    [users],
  );
  await c.query(
    `INSERT INTO users (id, email, name, user_type, is_verified, two_factor, first_time, metadata, created_at, updated_at)
     VALUES ($1, 'admin@bench.example.test', 'Bench admin', 'superadmin', true, false, false, '{}', clock_timestamp(), clock_timestamp())`,
    [ADMIN_ID],
  );
  note(`rebuilding ${saved.create.length} indexes and constraints`);
  for (const sql of saved.create) await c.query(sql);
  await c.query(
    `INSERT INTO sessions (id, token_hash, session_prefix, user_id, status, two_factor_verified, created_at, last_used_at, expires_at)
     VALUES ('bench-admin-session', encode(sha256(convert_to($1, 'UTF8')), 'hex'), left($1, 12), $2, 'active', true, now(), now(), now() + interval '7 days')`,
    [ADMIN_TOKEN, ADMIN_ID],
  );
  await c.query('ANALYZE users');
  return { seconds: Math.round((Date.now() - t0) / 100) / 10 };
}

/** The id the plain seeding gives user `i`. */
export const plainUserId = (i: number) => uuidOf(`p${i}`);
