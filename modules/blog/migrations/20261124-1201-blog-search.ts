import type { MigrationDef } from '../../../src/module-api.js';

/**
 * Full-text search of title, excerpt and body, ranked: on PostgreSQL a stored tsvector (title
 * weighted A, excerpt B, body C; the `simple` configuration, since posts come in any language) with a
 * GIN index; on SQLite an FTS5 table kept in step by triggers.
 */
/** A tsvector holds at most 1 MB: PostgreSQL indexes the first 100,000 characters of a body (FTS5 has no such limit). */
const BODY_INDEXED = 100_000;

export const blogSearch: MigrationDef = {
  name: '20261124-1201-blog-search',
  async up({ sequelize, transaction, dialect }) {
    const q = (sql: string) => sequelize.query(sql, { transaction });
    if (dialect === 'postgres') {
      await q(`ALTER TABLE blog_posts ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', coalesce(title, '')), 'A') ||
        setweight(to_tsvector('simple', coalesce(excerpt, '')), 'B') ||
        setweight(to_tsvector('simple', left(coalesce(body, ''), ${BODY_INDEXED})), 'C')) STORED`);
      await q('CREATE INDEX blog_posts_search ON blog_posts USING GIN (search_vector)');
      // Lists and searches read every column but the bodies: those go out of line once a row passes
      // 512 bytes, so a search's heap pages hold many rows; the tsvector stays in the row for ranking.
      await q('ALTER TABLE blog_posts ALTER COLUMN search_vector SET STORAGE MAIN');
      await q('ALTER TABLE blog_posts SET (toast_tuple_target = 512)');
      return;
    }
    await q('CREATE VIRTUAL TABLE blog_posts_fts USING fts5(post_id UNINDEXED, title, excerpt, body, tokenize = "unicode61 remove_diacritics 2")');
    await q(
      "CREATE TRIGGER blog_posts_fts_insert AFTER INSERT ON blog_posts BEGIN INSERT INTO blog_posts_fts (post_id, title, excerpt, body) VALUES (new.id, new.title, coalesce(new.excerpt, ''), new.body); END",
    );
    await q(`CREATE TRIGGER blog_posts_fts_update AFTER UPDATE OF title, excerpt, body ON blog_posts BEGIN
      DELETE FROM blog_posts_fts WHERE post_id = old.id;
      INSERT INTO blog_posts_fts (post_id, title, excerpt, body) VALUES (new.id, new.title, coalesce(new.excerpt, ''), new.body); END`);
    await q('CREATE TRIGGER blog_posts_fts_delete AFTER DELETE ON blog_posts BEGIN DELETE FROM blog_posts_fts WHERE post_id = old.id; END');
    await q("INSERT INTO blog_posts_fts (post_id, title, excerpt, body) SELECT id, title, coalesce(excerpt, ''), body FROM blog_posts");
  },
  async down({ sequelize, transaction, dialect }) {
    const q = (sql: string) => sequelize.query(sql, { transaction });
    if (dialect === 'postgres') {
      await q('ALTER TABLE blog_posts RESET (toast_tuple_target)');
      await q('DROP INDEX IF EXISTS blog_posts_search');
      await q('ALTER TABLE blog_posts DROP COLUMN IF EXISTS search_vector');
      return;
    }
    for (const trg of ['insert', 'update', 'delete']) await q(`DROP TRIGGER IF EXISTS blog_posts_fts_${trg}`);
    await q('DROP TABLE IF EXISTS blog_posts_fts');
  },
};
