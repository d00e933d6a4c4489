import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, people, published, startBlog, type TestApp } from './test/kit.js';
import { viewDay } from './engage.js';

let t: TestApp;
let p: Awaited<ReturnType<typeof people>>;
beforeAll(async () => {
  // Behind one proxy: X-Forwarded-For names the client, so one test sends from many networks.
  t = await startBlog({ env: { TRUST_PROXY: '1', RATE_LIMITS_ENABLED: 'false' } });
  p = await people(t);
});
afterAll(async () => {
  await t?.close();
});

const view = (postId: string, from: string, ua: string, session?: string) =>
  t.request('POST', `/api/v1/posts/${postId}/view`, { session, headers: { 'X-Forwarded-For': from, 'User-Agent': ua } });

describe(`blog views per post, network and day (${BACKEND})`, () => {
  it('when one address rotates its User-Agent, then 20 views count once; another /24 counts; the next day counts again', async () => {
    const post = await published(t, p.writer.token);
    const sent = [];
    for (let i = 0; i < 20; i++) sent.push(await view(post.id, '203.0.113.7', `Agent/${i} (rotating)`));
    expect(sent.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(sent.filter((r) => r.body.data.counted)).toHaveLength(1);
    expect(sent.at(-1)!.body.data.views).toBe(1);
    // Another address of the same /24, signed in or not, and the same /24 written as IPv4-mapped IPv6.
    expect((await view(post.id, '203.0.113.200', 'Other')).body.data.counted).toBe(false);
    expect((await view(post.id, '203.0.113.9', 'Other', p.customer.token)).body.data.counted).toBe(false);
    expect((await view(post.id, '::ffff:203.0.113.8', 'Mapped')).body.data.counted).toBe(false);
    // Another /24.
    const other = await view(post.id, '203.0.114.7', 'Agent/0 (rotating)');
    expect(other.body.data).toMatchObject({ counted: true, views: 2 });
    // IPv6: one /48 counts once, another counts.
    expect((await view(post.id, '2001:db8:1:aaaa::1', 'v6')).body.data.counted).toBe(true);
    expect((await view(post.id, '2001:db8:1:bbbb::2', 'v6 other')).body.data.counted).toBe(false);
    expect((await view(post.id, '2001:db8:2::1', 'v6')).body.data).toMatchObject({ counted: true, views: 4 });

    // The next UTC day: the day's rows are yesterday's now, so each network counts once more.
    const yesterday = viewDay(new Date(Date.now() - 86_400_000));
    await t.app.sequelize.query('UPDATE blog_views SET view_day = ? WHERE post_id = ?', { replacements: [yesterday, post.id] });
    const again = [];
    for (let i = 0; i < 5; i++) again.push(await view(post.id, '203.0.113.7', `Agent/${i + 100}`));
    expect(again.filter((r) => r.body.data.counted)).toHaveLength(1);
    expect(again.at(-1)!.body.data.views).toBe(5);

    const stats = (await t.request('GET', `/api/v1/posts/${post.id}/stats`)).body.data;
    expect(stats).toMatchObject({ views: 5, unique_viewers: 4 });
    // Stored: one row per counted view, the network only as a keyed digest, no user.
    const rows = (await t.app.sequelize.query('SELECT viewer_key, view_day, user_id FROM blog_views WHERE post_id = ?', {
      replacements: [post.id],
      type: 'SELECT' as never,
    })) as unknown as { viewer_key: string; view_day: string; user_id: string | null }[];
    expect(rows).toHaveLength(5);
    for (const r of rows) {
      expect(r.viewer_key).toMatch(/^[0-9a-f]{48}$/);
      expect(r.user_id).toBeNull();
    }
    expect(rows.filter((r) => r.view_day === viewDay(new Date()))).toHaveLength(1);
  });

  it('when one network sends views at once with different agents, then one counts', async () => {
    const post = await published(t, p.writer.token);
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => view(post.id, `198.51.100.${i + 1}`, `Burst/${i}`)));
    expect(burst.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(burst.filter((r) => r.body.data.counted)).toHaveLength(1);
    expect((await t.request('GET', `/api/v1/posts/${post.id}/stats`)).body.data).toMatchObject({ views: 1, unique_viewers: 1 });
  });
});
