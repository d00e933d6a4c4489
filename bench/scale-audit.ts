import { createHash } from 'node:crypto';
import type pg from 'pg';
import { indexesAndConstraints } from './scale-seed.js';

/**
 * The security-event record at scale (`npm run bench:scale`): events seeded set-based over the past
 * year, then the admin query (GET /auth/admin/audit-events) by user, by type, by family, by time window
 * and deep in a cursor walk, each beside the same page read in plain SQL.
 */

const YEAR_MS = 365 * 86_400_000;
/** Events per seeded slice: progress shows, and no statement holds everything at once. */
const SLICE = 1_000_000;
const ADMINS = 20;

/**
 * The type of event `i`, from a hash of `i`: mostly sign-ins, a few percent of account changes, rare
 * two-factor events and module changes (the families a query may ask for cover every frequency).
 */
const TYPE_SQL = `CASE
  WHEN i % 200000 = 0 THEN 'module.installed'
  WHEN i % 200000 = 1 THEN 'module.toggled'
  WHEN r < 450 THEN 'sign_in.succeeded'
  WHEN r < 650 THEN 'sign_in.failed'
  WHEN r < 690 THEN 'sign_in.throttled'
  WHEN r < 790 THEN 'sign_out'
  WHEN r < 840 THEN 'session.revoked'
  WHEN r < 890 THEN 'user.updated'
  WHEN r < 905 THEN 'password.changed'
  WHEN r < 920 THEN 'password.reset'
  WHEN r < 935 THEN 'email.verified'
  WHEN r < 940 THEN 'email.changed'
  WHEN r < 945 THEN 'two_factor.enabled'
  WHEN r < 948 THEN 'two_factor.disabled'
  WHEN r < 950 THEN 'two_factor.reset'
  WHEN r < 953 THEN 'two_factor.method_added'
  WHEN r < 955 THEN 'two_factor.method_removed'
  WHEN r < 962 THEN 'social.linked'
  WHEN r < 965 THEN 'social.unlinked'
  WHEN r < 990 THEN 'user.created'
  WHEN r < 993 THEN 'user.role_changed'
  WHEN r < 996 THEN 'user.disabled'
  WHEN r < 998 THEN 'user.enabled'
  ELSE 'user.deleted' END`;

/** Types an admin does to someone; the rest are done by the user (or nobody: refused sign-ins, module changes). */
const BY_ADMIN = "('session.revoked','user.updated','user.role_changed','user.disabled','user.enabled','user.deleted','two_factor.reset')";
const ANONYMOUS = "('sign_in.failed','sign_in.throttled','module.installed','module.toggled')";

/** The id of seeded user `n` (scale-seed.ts makes them `md5('u' || n)::uuid`). */
function seededUserId(n: number): string {
  const h = createHash('md5').update(`u${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Seeds `events` events, one every (year ÷ events) up to now, about `users` seeded users (the
 * users of scale-seed.ts, md5('u' || n)), with ids made as the service makes them (UUIDv7: the time
 * first), the table's indexes dropped first and rebuilt after, then VACUUM ANALYZE.
 */
export async function seedAudit(c: pg.Client, events: number, users: number, note: (s: string) => void): Promise<{ seconds: number }> {
  const t0 = Date.now();
  await c.query("SET maintenance_work_mem = '512MB'");
  const saved = await indexesAndConstraints(c, ['audit_events']);
  for (const sql of saved.drop) await c.query(sql);
  const end = Date.now();
  const step = YEAR_MS / events;
  note(`seeding ${events.toLocaleString('en-US')} security events`);
  for (let from = 1; from <= events; from += SLICE) {
    const to = Math.min(events, from + SLICE - 1);
    await c.query(
      `INSERT INTO audit_events (id, type, at, outcome, actor_id, actor_type, actor_via, user_id, ip, user_agent, request_id, identifier, details)
       SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(h, 13, 3) || '-8' || substr(h, 16, 3) || '-' || substr(h, 19, 12),
              type, at,
              CASE WHEN type IN ('sign_in.failed', 'sign_in.throttled') THEN 'failure' ELSE 'success' END,
              CASE WHEN type IN ${ANONYMOUS} THEN NULL WHEN type IN ${BY_ADMIN} THEN md5('a' || (i % ${ADMINS}))::uuid::text ELSE uid END,
              CASE WHEN type IN ${ANONYMOUS} THEN NULL WHEN type IN ${BY_ADMIN} THEN 'admin' ELSE 'customer' END,
              NULL,
              CASE WHEN type LIKE 'module.%' THEN NULL ELSE uid END,
              '10.' || (i % 200) || '.' || ((i / 200) % 250) || '.' || ((i * 7) % 250),
              'Mozilla/5.0 (X11; Linux x86_64) bench/' || (i % 50),
              substr(md5('r' || i), 1, 20),
              NULL,
              CASE WHEN type = 'sign_in.succeeded' THEN '{"method":"password"}' WHEN type = 'user.updated' THEN '{"fields":["name"]}' ELSE '{}' END
         FROM (
           SELECT i, r, at, md5('u' || (1 + (i::bigint * 7919) % $4::int))::uuid::text AS uid, ${TYPE_SQL} AS type,
                  lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || lpad(to_hex(i % 4096), 3, '0') || md5(i::text) AS h
             FROM (SELECT i, (i * 2654435761) % 1000 AS r,
                          to_timestamp(($3::float8 - ($5::int - i) * $6::float8) / 1000) AS at
                     FROM generate_series($1::int, $2::int) i) s
         ) e`,
      [from, to, end, users, events, step],
    );
    note(`  events ${to.toLocaleString('en-US')} of ${events.toLocaleString('en-US')}`);
  }
  note(`rebuilding ${saved.create.length} indexes of audit_events`);
  for (const sql of saved.create) await c.query(sql);
  note('VACUUM ANALYZE audit_events');
  await c.query('VACUUM ANALYZE audit_events');
  return { seconds: Math.round((Date.now() - t0) / 100) / 10 };
}

/** One measured operation: Gatehouse over HTTP, and its baseline in plain SQL, called with the sample's index. */
export type Measure = (
  operation: string,
  http: (i: number) => Promise<unknown>,
  sql: (i: number) => Promise<unknown>,
  /** p95 goal in ms (default 50). */
  targetMs?: number,
  /** How many times the baseline runs (default: as many as Gatehouse); fewer where the plain SQL takes seconds. */
  baselineSamples?: number,
) => Promise<void>;

const PAGE = 50;
const COLS = 'id, type, at, outcome, actor_id, actor_type, actor_via, user_id, ip, user_agent, request_id, identifier, details';
const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');
const TWO_FACTOR = ['two_factor.enabled', 'two_factor.disabled', 'two_factor.reset', 'two_factor.method_added', 'two_factor.method_removed'];

/**
 * The admin query's cases. `api(qs)` calls GET /auth/admin/audit-events; the baselines are the page
 * read as one would write it by hand (an `IN` list for a family, `at` bounds for a window).
 */
export async function auditQueries(api: (qs: string) => Promise<unknown>, db: pg.Client, users: number, measure: Measure): Promise<string[]> {
  const page = (where: string, params: unknown[]) => db.query(`SELECT ${COLS} FROM audit_events WHERE ${where} ORDER BY id DESC LIMIT ${PAGE + 1}`, params);
  const userAt = (i: number) => seededUserId(1 + ((i * 104729 + 17) % users));
  await measure(
    'by user',
    (i) => api(`user_id=${userAt(i)}`),
    (i) => page('user_id = $1', [userAt(i)]),
  );
  await measure(
    'by type (sign_in.failed, 20 %)',
    () => api('type=sign_in.failed'),
    () => page('type = $1', ['sign_in.failed']),
  );
  await measure(
    'by type (two_factor.reset, 0.2 %)',
    () => api('type=two_factor.reset'),
    () => page('type = $1', ['two_factor.reset']),
  );
  await measure(
    'by family (two_factor.*, 1 %)',
    () => api('type=two_factor.*'),
    () => page('type = ANY($1)', [TWO_FACTOR]),
  );
  await measure(
    'by family (module.*, 0.001 %)',
    () => api('type=module.*'),
    () => page('type = ANY($1)', [['module.installed', 'module.uninstalled', 'module.toggled']]),
  );
  const day = (i: number) => new Date(Date.now() - (5 + ((i * 37) % 350)) * 86_400_000);
  const window = (i: number) => [day(i).toISOString(), new Date(day(i).getTime() + 86_400_000).toISOString()];
  await measure(
    'by time window (one day, 5 to 355 days ago)',
    (i) => api(`since=${window(i)[0]}&until=${window(i)[1]}`),
    // By hand one would order a window by `at` (its index); `ORDER BY id` with `at` bounds alone walks
    // every newer event first: 2 to 4 s a page here at 10 M events (docs/audit.md, "At scale").
    (i) => db.query(`SELECT ${COLS} FROM audit_events WHERE at >= $1 AND at < $2 ORDER BY at DESC LIMIT ${PAGE + 1}`, window(i)),
  );
  await measure(
    'by user and family (sign_in.*)',
    (i) => api(`user_id=${userAt(i)}&type=sign_in.*`),
    (i) => page('user_id = $1 AND type = ANY($2)', [userAt(i), ['sign_in.succeeded', 'sign_in.failed', 'sign_in.throttled']]),
  );
  // A cursor as page 1001 and deeper get it: the id the page before ended on (shallower on a small table).
  const idAt = async (where: string, pageNo: number) =>
    (
      await db.query<{ id: string }>(
        `SELECT id FROM audit_events WHERE ${where} ORDER BY id DESC OFFSET LEAST(${pageNo * PAGE - 1}, (SELECT count(*) - 1 FROM audit_events WHERE ${where})) LIMIT 1`,
      )
    ).rows[0].id;
  const deep: string[] = [];
  for (const p of [1000, 1500, 2000, 3000]) deep.push(await idAt('true', p));
  await measure(
    'deep cursor (pages 1001 to 3001, no filter)',
    (i) => api(`cursor=${cursorOf(deep[i % deep.length])}`),
    (i) => page('id < $1', [deep[i % deep.length]]),
  );
  const deepFailed = await idAt("type = 'sign_in.failed'", 1000);
  await measure(
    'deep cursor (page 1001 of sign_in.failed)',
    () => api(`type=sign_in.failed&cursor=${cursorOf(deepFailed)}`),
    () => page('type = $1 AND id < $2', ['sign_in.failed', deepFailed]),
  );
  const counts = await db.query<{ type: string; n: string }>(
    "SELECT type, count(*) AS n FROM audit_events WHERE type LIKE 'two_factor.%' OR type LIKE 'module.%' GROUP BY type",
  );
  return [`rare types: ${counts.rows.map((r) => `${r.type} ${Number(r.n).toLocaleString('en-US')}`).join(', ')}`];
}
