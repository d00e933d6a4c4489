import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { provisionBackend, type BenchBackend } from './backend.js';
import { envNumber, note, out, runBenchmark, table, writeResults } from './harness.js';
import { round } from './load.js';
import { prepare, type Prepared } from './prepare.js';
import { freePort, startChild, stopAll } from './processes.js';

/**
 * `npm run bench:blog`: the blog module on PostgreSQL with 100,000 posts (comments, reactions,
 * bookmarks, views): the p95 of the public list's first page, a post by slug, a search and stats over
 * HTTP, each beside its bare query baseline (the same reads in plain SQL, same database, same run).
 * Target: p95 under 30 ms each.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RESULTS = path.join(ROOT, 'bench', 'results', 'blog-latest.json');
const num = (v: string | undefined, d: number) => Math.round(envNumber(v, d));
const POSTS = num(process.env.BENCH_BLOG_POSTS, 100_000);
const AUTHORS = Math.max(10, Math.round(POSTS / 100));
const READERS = num(process.env.BENCH_BLOG_READERS, 5000);
const COMMENTS = num(process.env.BENCH_BLOG_COMMENTS, POSTS * 3);
const REACTIONS = num(process.env.BENCH_BLOG_REACTIONS, POSTS * 5);
const SAMPLES = num(process.env.BENCH_BLOG_SAMPLES, 200);
const TARGET_MS = 30;
/** BENCH_BLOG_KEEP=1 keeps the seeded database (its URL is printed) for EXPLAIN. */
const KEEP = process.env.BENCH_BLOG_KEEP === '1';
/** Modules installed for the run: `blog,post-types` measures the blog with post types answering it. */
const MODULES = (process.env.BENCH_BLOG_MODULES ?? 'blog')
  .split(',')
  .map((m) => m.trim())
  .filter(Boolean);
const VOCABULARY = 3000;

interface Latency {
  p50: number;
  p95: number;
  max: number;
  n: number;
}

function summarise(ms: number[]): Latency {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => round(s[Math.min(s.length - 1, Math.floor(q * s.length))], 2);
  return { p50: at(0.5), p95: at(0.95), max: round(s[s.length - 1], 2), n: s.length };
}

async function timed(n: number, fn: (i: number) => Promise<void>): Promise<Latency> {
  for (let i = 0; i < Math.min(20, n); i++) await fn(n + i);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    ms.push(performance.now() - t0);
  }
  return summarise(ms);
}

/** Pronounceable made-up words, the same every run. */
function vocabulary(): string[] {
  const c = 'bdfgklmnprstvz';
  const v = 'aeiou';
  const words: string[] = [];
  for (let i = 0; words.length < VOCABULARY; i++) {
    const a = c[i % c.length] + v[Math.floor(i / c.length) % v.length];
    const b = c[Math.floor(i / 70) % c.length] + v[Math.floor(i / 980) % v.length] + c[(i * 7) % c.length];
    words.push(a + b);
  }
  return [...new Set(words)];
}

/** Visible to anyone: published (not every 20th) and public (not 1 in 10 auth, not 1 in 50 private). */
const isPublic = (i: number) => i % 20 !== 0 && i % 10 !== 1 && i % 50 !== 2;
const publicPost = (k: number) => {
  let i = 1 + ((k * 7919 + 17) % POSTS);
  while (!isPublic(i)) i = 1 + (i % POSTS);
  return i;
};

async function seed(db: pg.Client, words: string[]): Promise<number> {
  const t0 = Date.now();
  const n = words.length;
  note(`seeding ${AUTHORS} authors and ${READERS} readers`);
  await db.query(
    `INSERT INTO users (id, email, name, user_type, is_verified, two_factor, first_time, metadata, created_at, updated_at)
     SELECT md5('bw' || i)::uuid::text, 'writer' || i || '@bench.example.test', 'Writer ' || i, 'writer', true, false, false, '{}'::json, now(), now() FROM generate_series(1, $1::int) i
     UNION ALL
     SELECT md5('br' || i)::uuid::text, 'reader' || i || '@bench.example.test', 'Reader ' || i, 'customer', true, false, false, '{}'::json, now(), now() FROM generate_series(1, $2::int) i`,
    [AUTHORS, READERS],
  );
  for (let from = 1; from <= POSTS; from += 10_000) {
    const to = Math.min(POSTS, from + 9999);
    note(`seeding posts ${from.toLocaleString('en-US')}–${to.toLocaleString('en-US')}`);
    await db.query(
      `INSERT INTO blog_posts (id, slug, title, body, body_format, body_html, excerpt, status, visibility, lang, metadata, author_id, view_count,
                               published_at, created_at, updated_at)
       SELECT md5('p' || i)::uuid::text, 'post-' || i, w.title, w.body, 'markdown', '<p>' || w.body || '</p>', left(w.body, 200),
              CASE WHEN i % 20 = 0 THEN 'draft' ELSE 'published' END,
              CASE WHEN i % 10 = 1 THEN 'auth' WHEN i % 50 = 2 THEN 'private' ELSE 'public' END,
              'en', '{}'::json, md5('bw' || (1 + i % $3::int))::uuid::text, 0,
              CASE WHEN i % 20 = 0 THEN NULL ELSE timestamptz '2024-01-01 00:00:00+00' + i * interval '5 minutes' END,
              timestamptz '2024-01-01 00:00:00+00' + i * interval '5 minutes', timestamptz '2024-01-01 00:00:00+00' + i * interval '5 minutes'
         FROM generate_series($1::int, $2::int) i,
              LATERAL (SELECT
                initcap(array_to_string(ARRAY(SELECT ($4::text[])[1 + ((i * 31 + k * 7877) % $5::int)] FROM generate_series(1, 4) k), ' ')) AS title,
                array_to_string(ARRAY(SELECT ($4::text[])[1 + ((i * 7919 + k * 104729 + k * k * 13) % $5::int)] FROM generate_series(1, 60) k), ' ') AS body) w`,
      [from, to, AUTHORS, words, n],
    );
  }
  note(`seeding ${COMMENTS.toLocaleString('en-US')} comments, ${REACTIONS.toLocaleString('en-US')} reactions, bookmarks and views`);
  await db.query(
    `INSERT INTO blog_comments (id, post_id, user_id, body, status, created_at, updated_at)
     SELECT md5('c' || j)::uuid::text, md5('p' || (1 + (j * 13) % $2::int))::uuid::text, md5('br' || (1 + j % $3::int))::uuid::text,
            'Comment number ' || j, CASE WHEN j % 10 = 0 THEN 'pending' ELSE 'approved' END, now(), now()
       FROM generate_series(1, $1::int) j`,
    [COMMENTS, POSTS, READERS],
  );
  await db.query(
    `INSERT INTO blog_reactions (id, post_id, user_id, reaction_type, created_at)
     SELECT md5('r' || j)::uuid::text, md5('p' || (1 + (j * 7) % $2::int))::uuid::text, md5('br' || (1 + ((j / $2::int) * 977 + j) % $3::int))::uuid::text,
            (ARRAY['like', 'love', 'clap', 'insightful'])[1 + j % 4], now()
       FROM generate_series(1, $1::int) j ON CONFLICT DO NOTHING`,
    [REACTIONS, POSTS, READERS],
  );
  await db.query(
    `INSERT INTO blog_bookmarks (id, post_id, user_id, created_at)
     SELECT md5('b' || j)::uuid::text, md5('p' || (1 + (j * 11) % $2::int))::uuid::text, md5('br' || (1 + j % $3::int))::uuid::text, now()
       FROM generate_series(1, $1::int) j ON CONFLICT DO NOTHING`,
    [POSTS, POSTS, READERS],
  );
  await db.query(
    `INSERT INTO blog_views (id, post_id, viewer_key, views, counted_at, created_at)
     SELECT md5('v' || j)::uuid::text, md5('p' || (1 + (j * 17) % $2::int))::uuid::text, md5('viewer' || j), 1 + j % 3, now() - interval '1 hour', now()
       FROM generate_series(1, $1::int) j ON CONFLICT DO NOTHING`,
    [POSTS * 2, POSTS],
  );
  await db.query('UPDATE blog_posts p SET view_count = v.n FROM (SELECT post_id, SUM(views) AS n FROM blog_views GROUP BY post_id) v WHERE v.post_id = p.id');
  // What autovacuum does soon after a bulk load: statistics, and the visibility map index-only scans need.
  note('VACUUM ANALYZE');
  await db.query('VACUUM ANALYZE');
  return round((Date.now() - t0) / 1000, 1);
}

interface Row {
  operation: string;
  gatehouse: Latency;
  baseline: Latency;
  ratio: number;
  target: string;
  pass: boolean;
  note?: string;
}

const VISIBLE = "deleted_at IS NULL AND status = 'published' AND visibility = 'public'";

async function measure(url: string, db: pg.Client, words: string[]): Promise<Row[]> {
  const rows: Row[] = [];
  const get = async (p: string) => {
    const r = await fetch(`${url}${p}`);
    const body = await r.text();
    if (r.status !== 200) throw new Error(`GET ${p} answered ${r.status}: ${body.slice(0, 300)}`);
    return body;
  };
  const add = async (operation: string, http: (i: number) => Promise<unknown>, sql: (i: number) => Promise<unknown>, extra?: string) => {
    note(operation);
    const gatehouse = await timed(SAMPLES, async (i) => void (await http(i)));
    const baseline = await timed(SAMPLES, async (i) => void (await sql(i)));
    rows.push({
      operation,
      gatehouse,
      baseline,
      ratio: round(gatehouse.p95 / Math.max(baseline.p95, 0.01), 2),
      target: `p95 < ${TARGET_MS} ms`,
      pass: gatehouse.p95 < TARGET_MS,
      note: extra,
    });
  };
  const word = (i: number) => words[(i * 37 + 11) % words.length];

  await add(
    'GET /api/v1/posts/ (first page, anonymous)',
    () => get('/api/v1/posts/'),
    async () => {
      await db.query(`SELECT * FROM blog_posts WHERE ${VISIBLE} ORDER BY published_at DESC, id DESC LIMIT 20`);
      await db.query(`SELECT count(*) FROM blog_posts WHERE ${VISIBLE}`);
    },
  );
  await add(
    'GET /api/v1/posts/{slug}',
    (i) => get(`/api/v1/posts/post-${publicPost(i)}`),
    (i) => db.query('SELECT * FROM blog_posts WHERE slug = $1', [`post-${publicPost(i)}`]),
  );
  const sample = JSON.parse(await get(`/api/v1/posts/?q=${word(1)}`)) as { meta: { total: number } };
  await add(
    'GET /api/v1/posts/?q=<a word>',
    (i) => get(`/api/v1/posts/?q=${word(i)}`),
    async (i) => {
      const q = "search_vector @@ websearch_to_tsquery('simple', $1)";
      await db.query(
        `SELECT *, count(*) OVER () FROM blog_posts WHERE ${VISIBLE} AND ${q} ORDER BY ts_rank(search_vector, websearch_to_tsquery('simple', $1)) DESC LIMIT 20`,
        [word(i)],
      );
    },
    `matches for one word: ${sample.meta.total}`,
  );
  await add(
    'GET /api/v1/posts/{id}/stats',
    (i) => get(`/api/v1/posts/${postId(publicPost(i))}/stats`),
    async (i) => {
      const id = postId(publicPost(i));
      await db.query('SELECT view_count, (SELECT count(*) FROM blog_views WHERE post_id = $1) FROM blog_posts WHERE id = $1', [id]);
      await db.query('SELECT reaction_type, count(*) FROM blog_reactions WHERE post_id = $1 GROUP BY reaction_type', [id]);
      await db.query("SELECT count(*) FROM blog_comments WHERE post_id = $1 AND deleted_at IS NULL AND status = 'approved'", [id]);
      await db.query('SELECT count(*) FROM blog_bookmarks WHERE post_id = $1', [id]);
    },
  );
  // The plans behind the figures, for whoever reads a FAIL.
  for (const [what, sql, args] of [
    ['list', `SELECT * FROM blog_posts WHERE ${VISIBLE} ORDER BY published_at DESC, id DESC LIMIT 20`, []],
    ['list count', `SELECT count(*) FROM blog_posts WHERE ${VISIBLE}`, []],
    [
      'search',
      `SELECT *, count(*) OVER () FROM blog_posts WHERE ${VISIBLE} AND search_vector @@ websearch_to_tsquery('simple', $1) ORDER BY ts_rank(search_vector, websearch_to_tsquery('simple', $1)) DESC LIMIT 20`,
      [word(3)],
    ],
  ] as [string, string, unknown[]][]) {
    const plan = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, args);
    note(`plan of the ${what}:\n${plan.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
  }
  return rows;
}

let ids: Map<number, string> = new Map();
const postId = (i: number) => ids.get(i)!;

const fmt = (l: Latency) => `${l.p50.toFixed(1)} / ${l.p95.toFixed(1)}`;
function render(rows: Row[]): string {
  const head = ['operation', 'gatehouse p50 / p95 ms', 'plain SQL p50 / p95 ms', 'p95 ÷ plain', 'goal', ''];
  const body = rows.map((r) => [r.operation, fmt(r.gatehouse), fmt(r.baseline), r.ratio.toFixed(2), r.target, r.pass ? 'PASS' : 'FAIL']);
  return table(head, body);
}

async function main(): Promise<number> {
  const started = Date.now();
  let backend: BenchBackend | null = null;
  let prepared: Prepared | null = null;
  let db: pg.Client | null = null;
  const cleanup = async () => {
    await stopAll();
    await db?.end().catch(() => undefined);
    db = null;
    if (prepared) rmSync(prepared.dataDir, { recursive: true, force: true });
    if (KEEP && backend) note(`kept for EXPLAIN: ${backend.databaseUrl} (drop it when done)`);
    else await backend?.release().catch((err) => note(`cleanup failed: ${(err as Error).message}`));
    backend = null;
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  try {
    backend = await provisionBackend(process.env);
    if (!backend.created) throw new Error('bench:blog seeds and drops its data: it runs on a fresh database only (unset BENCH_DATABASE_URL)');
    prepared = await prepare(ROOT, backend, 0);
    note(`gatehouse module install ${MODULES.join(' ')}`);
    const install = spawnSync(process.execPath, [...prepared.cli, 'module', 'install', ...MODULES, '--yes'], {
      cwd: ROOT,
      env: prepared.env as NodeJS.ProcessEnv,
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (install.status !== 0) throw new Error(`module install ${MODULES.join(' ')} failed: ${(install.stderr || install.stdout).slice(-600)}`);
    db = new pg.Client({ connectionString: backend.databaseUrl });
    await db.connect();
    const words = vocabulary();
    const seedSeconds = await seed(db, words);
    note(`seeded in ${seedSeconds} s`);
    ids = new Map();
    for (let k = 0; k < SAMPLES + 20; k++) {
      const i = publicPost(k);
      ids.set(i, (await db.query<{ id: string }>('SELECT id FROM blog_posts WHERE slug = $1', [`post-${i}`])).rows[0].id);
    }

    const port = await freePort();
    const server = await startChild({
      name: 'gatehouse serve',
      args: [...prepared.cli, 'serve', '--workers', '1', '--data-dir', prepared.dataDir, '--port', String(port), '--host', '127.0.0.1'],
      env: { ...prepared.env, PORT: String(port), JOBS_ENABLED: 'false' },
      port,
      readyPath: '/health',
      cwd: ROOT,
    });
    const rows = await measure(server.url, db, words);
    const counts = (
      await db.query(
        "SELECT (SELECT count(*) FROM blog_posts) AS posts, (SELECT count(*) FROM blog_comments) AS comments, (SELECT count(*) FROM blog_reactions) AS reactions, (SELECT count(*) FROM blog_posts WHERE deleted_at IS NULL AND status = 'published' AND visibility = 'public') AS public",
      )
    ).rows[0];
    out();
    out(
      `PostgreSQL, ${Number(counts.posts).toLocaleString('en-US')} posts (${Number(counts.public).toLocaleString('en-US')} public), ${Number(counts.comments).toLocaleString('en-US')} comments, ${Number(counts.reactions).toLocaleString('en-US')} reactions; ${SAMPLES} requests per figure, one at a time; one Gatehouse worker, Redis; modules ${MODULES.join(', ')}; ${os.availableParallelism()} cores`,
    );
    out();
    out(render(rows));
    for (const r of rows) if (r.note) out(`  ${r.operation}: ${r.note}`);
    const pass = rows.every((r) => r.pass);
    out();
    out(pass ? 'PASS' : 'FAIL');
    writeResults(ROOT, RESULTS, {
      date: new Date().toISOString(),
      runSeconds: round((Date.now() - started) / 1000, 1),
      machine: {
        cores: os.availableParallelism(),
        cpu: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        loadavg: os.loadavg().map((l) => round(l, 2)),
      },
      sizes: {
        posts: Number(counts.posts),
        public: Number(counts.public),
        comments: Number(counts.comments),
        reactions: Number(counts.reactions),
        authors: AUTHORS,
        readers: READERS,
      },
      seedSeconds,
      samples: SAMPLES,
      rows,
      pass,
    } as { runSeconds: number });
    return pass ? 0 : 1;
  } finally {
    await cleanup();
  }
}

runBenchmark('bench:blog', main);
