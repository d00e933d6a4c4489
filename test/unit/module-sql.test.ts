import { describe, expect, it } from 'vitest';
import { assertOwnTables } from '../../src/modules/module-sql.js';

// The blog's and post-types' tables, as their manifests declare them (the FTS index is `blog_posts_fts`).
const own = new Set([
  'blog_posts',
  'blog_post_slugs',
  'blog_post_tags',
  'blog_tags',
  'blog_views',
  'blog_reactions',
  'blog_comments',
  'post_types',
  'post_types_revision',
]);
const check = (sql: string) => () => assertOwnTables('blog', own, sql);

/** Statements the blog and post-types really run (captured from their suites on both backends). */
const real = {
  sqlite: [
    "SELECT p.id, COUNT(*) OVER () AS total_count FROM blog_posts p JOIN (SELECT post_id, bm25(blog_posts_fts, 0, 10.0, 5.0, 1.0) AS rank FROM blog_posts_fts WHERE blog_posts_fts MATCH ?) s ON s.post_id = p.id WHERE p.deleted_at IS NULL AND ((p.status = 'published' AND p.visibility IN ('public', 'auth')) OR p.author_id = ?) AND p.status = ? ORDER BY s.rank, p.published_at DESC, p.id DESC LIMIT 20 OFFSET 0",
    'INSERT INTO blog_views (id, post_id, viewer_key, view_day, user_id, views, counted_at, created_at) VALUES (?, ?, ?, ?, NULL, 1, ?, ?) ON CONFLICT (post_id, viewer_key, view_day) DO NOTHING',
    'SELECT id FROM blog_views WHERE post_id = ? AND viewer_key = ? AND view_day = ?',
  ],
  postgres: [
    "SELECT p.id, COUNT(*) OVER () AS total_count FROM blog_posts p WHERE p.deleted_at IS NULL AND p.status = 'published' AND p.visibility = 'public' AND p.status = ? AND p.search_vector @@ websearch_to_tsquery('simple', ?) ORDER BY ts_rank(p.search_vector, websearch_to_tsquery('simple', ?)) DESC, p.published_at DESC, p.id DESC LIMIT 20 OFFSET 0",
    'SELECT pg_advisory_xact_lock(hashtext(?))',
  ],
  both: [
    'SELECT 1 AS x FROM blog_posts WHERE lang = ? AND slug = ? AND id <> ? UNION ALL SELECT 1 AS x FROM blog_post_slugs WHERE lang = ? AND slug = ? AND post_id <> ?',
    "SELECT COUNT(*) AS n FROM blog_posts p WHERE p.deleted_at IS NULL AND p.status = 'published' AND EXISTS (SELECT 1 FROM blog_post_tags pt JOIN blog_tags t ON t.id = pt.tag_id WHERE pt.post_id = p.id AND (t.slug = ? OR t.id = ?))",
    'SELECT p.id FROM blog_posts p WHERE p.id IN (?, ?, ?) ORDER BY COALESCE(p.published_at, p.created_at) DESC, p.id DESC LIMIT 2 OFFSET 2',
    'DELETE FROM blog_reactions WHERE post_id = ? AND user_id = ? AND reaction_type = ? RETURNING id',
    'UPDATE blog_comments SET parent_id = NULL WHERE parent_id IN (SELECT id FROM blog_comments WHERE user_id = ?)',
    "UPDATE blog_comments SET deleted_at = ?, body = '', updated_at = ? WHERE id = ?",
    'SELECT post_type, COUNT(*) AS n FROM blog_posts GROUP BY post_type',
    'UPDATE post_types_revision SET revision = ?, updated_at = ? WHERE id = 1',
    'SELECT MAX(sort_order) AS n FROM post_types',
  ],
};

describe('module SQL guard: the modules’ real statements pass', () => {
  it.each([...real.sqlite, ...real.postgres, ...real.both])('%s', (sql) => {
    expect(check(sql)).not.toThrow();
  });
});

describe('module SQL guard: every way to another table is refused', () => {
  const bypasses: Array<[string, string]> = [
    ['comma join', 'SELECT * FROM blog_posts, users'],
    ['comma join, aliased', 'SELECT u.email FROM blog_posts p, users u'],
    ['quoted identifier', 'SELECT * FROM "users"'],
    ['quoted identifier in a join', 'SELECT * FROM blog_posts p JOIN "sessions" s ON s.user_id = p.author_id'],
    ['block comment before the table', 'SELECT * FROM /* */users'],
    ['block comment in a join', 'SELECT * FROM blog_posts JOIN/**/users ON 1 = 1'],
    ['line comment before the table', 'SELECT * FROM -- \n users'],
    ['DROP a core table', 'DROP TABLE users'],
    ['DROP an own table outside migrations', 'DROP TABLE blog_posts'],
    ['TRUNCATE a core table', 'TRUNCATE users'],
    ['TRUNCATE TABLE', 'TRUNCATE TABLE sessions'],
    ['ALTER a core table', 'ALTER TABLE users ADD COLUMN x TEXT'],
    ['ALTER an own table', 'ALTER TABLE blog_posts ADD COLUMN x TEXT'],
    ['CREATE', 'CREATE TABLE blog_posts_copy AS SELECT * FROM users'],
    ['subquery in the select list', 'SELECT (SELECT email FROM users LIMIT 1) AS e FROM blog_posts'],
    ['subquery in WHERE', 'SELECT * FROM blog_posts WHERE author_id IN (SELECT id FROM users WHERE user_type = ?)'],
    ['EXISTS subquery', 'SELECT * FROM blog_posts p WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = p.author_id)'],
    ['CTE over a core table', 'WITH x AS (SELECT * FROM users) SELECT * FROM x'],
    ['CTE named like an own table', 'WITH blog_posts AS (SELECT * FROM users) SELECT * FROM blog_posts'],
    ['UNION', 'SELECT id FROM blog_posts UNION SELECT id FROM users'],
    ['parenthesised join', 'SELECT * FROM (blog_posts JOIN users ON true)'],
    ['derived table', 'SELECT * FROM (SELECT * FROM users) AS u'],
    ['LATERAL', 'SELECT * FROM blog_posts, LATERAL (SELECT * FROM users) q'],
    ['INSERT … SELECT', 'INSERT INTO blog_posts (id) SELECT id FROM users'],
    ['INSERT into a core table', 'INSERT INTO users (id) VALUES (?)'],
    ['UPDATE a core table', 'UPDATE users SET user_type = ? WHERE id = ?'],
    ['UPDATE … FROM', 'UPDATE blog_posts SET title = users.email FROM users WHERE users.id = blog_posts.author_id'],
    ['UPDATE with a subquery', 'UPDATE blog_posts SET title = (SELECT email FROM users LIMIT 1)'],
    ['upsert with a subquery', 'INSERT INTO blog_posts (id) VALUES (?) ON CONFLICT (id) DO UPDATE SET title = (SELECT email FROM users LIMIT 1)'],
    ['DELETE from a core table', 'DELETE FROM sessions'],
    ['schema-qualified', 'SELECT * FROM public.users'],
    ['schema-qualified own name', 'SELECT * FROM main.blog_posts'],
    ['SQLite catalogue', 'SELECT sql FROM sqlite_master'],
    ['PostgreSQL catalogue', 'SELECT * FROM pg_catalog.pg_tables'],
    ['table-valued function', "SELECT * FROM pragma_table_info('users')"],
    ['a function that runs SQL', "SELECT query_to_xml('select * from users', true, true, '')"],
    ['a function that reads files', "SELECT pg_read_file('/etc/passwd')"],
    ['a schema-qualified function', "SELECT pg_catalog.lower('x') FROM blog_posts"],
    ['a function of the public schema', 'SELECT public.lower(title) FROM blog_posts'],
    ['two statements', 'SELECT 1 FROM blog_posts; DELETE FROM users'],
    ['SELECT INTO a new table', 'SELECT * INTO stolen FROM blog_posts'],
    ['backslash in a literal (lexers disagree)', "SELECT '\\' , email FROM blog_posts"],
    ['dollar quoting', 'SELECT $$ x $$ FROM blog_posts'],
    ['backtick identifier', 'SELECT * FROM `users`'],
    ['PRAGMA', 'PRAGMA table_info(users)'],
    ['ATTACH', "ATTACH DATABASE 'x.db' AS x"],
    // A CTE name never stands in for a table, in whatever scope it is named (seen in review).
    [
      'CTE named users, in a nested scope',
      "UPDATE users SET user_type = 'superadmin' WHERE id = ? AND EXISTS (WITH users AS (SELECT 1 AS a) SELECT a FROM users)",
    ],
    [
      'CTE named users, reading core from the outer query',
      'SELECT (SELECT email FROM users LIMIT 1) FROM blog_posts WHERE EXISTS (WITH users AS (SELECT 1 AS a) SELECT a FROM users)',
    ],
    ['CTE named sessions, writing core', "UPDATE sessions SET status = 'active' WHERE EXISTS (WITH sessions AS (SELECT 1 AS a) SELECT a FROM sessions)"],
    ['CTE that reads its own name', 'WITH users AS (SELECT email, password_hash FROM users) SELECT * FROM users'],
    ['a later CTE shadowing what an earlier one reads', 'WITH a AS (SELECT * FROM users), users AS (SELECT 1) SELECT * FROM a'],
    ['quoted CTE name in another case', 'WITH "Users" AS (SELECT 1) SELECT email FROM users'],
    // Only `<own table>_fts` besides the declared names: no other prefix reaches a core table.
    ['a name merely prefixed by an own table', 'SELECT * FROM blog_posts_secret'],
    ['unparseable', 'SELECT FROM WHERE blog_posts ((('],
    ['empty', ''],
  ];
  it.each(bypasses)('%s', (_name, sql) => {
    expect(check(sql)).toThrow(/module blog/);
  });

  it('names the table it refused', () => {
    expect(check('SELECT * FROM blog_posts, users')).toThrow(/does not own table users/);
  });

  it('resolves a CTE name over own tables, where it is visible', () => {
    expect(
      check('WITH mine AS (SELECT id FROM blog_posts WHERE author_id = ?) SELECT COUNT(*) AS n FROM blog_comments WHERE post_id IN (SELECT id FROM mine)'),
    ).not.toThrow();
    expect(check('WITH a AS (SELECT id FROM blog_posts), b AS (SELECT id FROM a) SELECT * FROM b')).not.toThrow();
    expect(check('WITH RECURSIVE a AS (SELECT id FROM blog_posts) SELECT * FROM a')).toThrow(/WITH RECURSIVE/);
  });

  it('refuses every core-looking name a module declaring a short table would reach by prefix', () => {
    const short = (sql: string) => () => assertOwnTables('x', new Set(['auth', 'module', 'user']), sql);
    expect(short('SELECT token_hash, user_id FROM auth_tokens')).toThrow(/does not own table auth_tokens/);
    expect(short('UPDATE module_state SET enabled = false')).toThrow(/does not own table module_state/);
    expect(short('SELECT * FROM user_accounts')).toThrow(/does not own table user_accounts/);
    expect(short('SELECT * FROM auth_fts')).not.toThrow();
  });

  it('accepts the FTS index of an own table (`<table>_fts`), and nothing else starting with its letters', () => {
    expect(check('SELECT rowid FROM blog_posts_fts WHERE blog_posts_fts MATCH ?')).not.toThrow();
    expect(check('SELECT * FROM blog_postsx')).toThrow(/does not own table blog_postsx/);
    expect(check('SELECT * FROM blog_posts_slugs_fts_data')).toThrow(/does not own table/);
  });
});
