import type { AppContext } from '../../app-context.js';
import { packageVersion } from '../../version.js';
import { withTimeout } from '../../with-timeout.js';
import { barChart, bucketEdges, type Chart } from '../console-charts.js';

/** Health and charts are read at most once a minute per process: the dashboard stays a few cheap reads. */
const DASHBOARD_TTL_MS = 60_000;

/** Sign-ins and failures per bucket: the last 24 hours by hour, the last 30 days by day. */
interface ChartCounts {
  day: [number[], number[]];
  month: [number[], number[]];
}

interface Dashboard {
  at: number;
  counts: ChartCounts;
  health: Record<string, 'ok' | 'fail'>;
  /** Active sessions: exact up to EXACT_SESSIONS, else the planner's estimate (docs/console.md "At scale"). */
  sessions: { total: number; exact: boolean };
}
/** Active sessions are counted exactly up to this many (each one an index entry read). */
const EXACT_SESSIONS = 1_000;

async function health(app: AppContext): Promise<Record<string, 'ok' | 'fail'>> {
  const ok = (p: Promise<unknown>) =>
    withTimeout(p, 2_000).then(
      () => 'ok' as const,
      () => 'fail' as const,
    );
  // /ready's checks (database, Redis when configured) plus the mail transport's own verify.
  const out: Record<string, 'ok' | 'fail'> = {};
  out.database = app.dbHealth.available() ? await ok(app.sequelize.query('SELECT 1')) : 'fail';
  if (app.redis && app.redisHealth) {
    const redis = app.redis;
    out.redis = (await app.redisHealth.run(
      'ping',
      async () => (await redis.ping()) === 'PONG',
      () => false,
    ))
      ? 'ok'
      : 'fail';
  }
  out.mail = await ok(app.services.mailer.verify());
  return out;
}

/**
 * Counts of closed windows, kept per process: a day or hour that ended over a minute ago (an id may run a
 * minute ahead of its time) keeps its count, so after the first dashboard only the open windows (this
 * hour, today) are counted again. Bounded: windows older than the 30-day chart are dropped.
 */
const closedCounts = new Map<string, number>();
const ID_LEAD_MS = 60_000;

async function counted(app: AppContext, type: string, edges: Date[], now: number): Promise<number[]> {
  const windows = edges.slice(0, -1).map((from, i) => [from, edges[i + 1]] as const);
  const key = (w: readonly [Date, Date]) => `${app.instanceId}|${type}|${w[0].getTime()}|${w[1].getTime()}`;
  const missing = windows.filter((w) => !closedCounts.has(key(w)));
  const fresh = await app.services.audit.countBuckets(type, missing);
  const out = new Map(missing.map((w, i) => [key(w), fresh[i]]));
  for (const [w, i] of missing.map((x, j) => [x, j] as const)) if (w[1].getTime() + ID_LEAD_MS < now) closedCounts.set(key(w), fresh[i]);
  for (const k of closedCounts.keys()) if (Number(k.split('|')[2]) < now - 32 * 86_400_000) closedCounts.delete(k);
  return windows.map((w) => out.get(key(w)) ?? closedCounts.get(key(w)) ?? 0);
}

async function chartCounts(app: AppContext): Promise<ChartCounts> {
  const now = new Date();
  const series = async (stepMs: number, count: number): Promise<[number[], number[]]> => {
    const edges = bucketEdges(now, stepMs, count);
    return Promise.all([counted(app, 'sign_in.succeeded', edges, now.getTime()), counted(app, 'sign_in.failed', edges, now.getTime())]);
  };
  const [day, month] = await Promise.all([series(3_600_000, 24), series(86_400_000, 30)]);
  return { day, month };
}

/** The charts in the reader's language, from the cached counts (drawing them is a few microseconds). */
function charts(counts: ChartCounts, t: (k: string) => string): { day: Chart; month: Chart } {
  const draw = (title: string, [ok, bad]: [number[], number[]]) =>
    barChart(title, [
      { label: t('console.sign_ins'), values: ok, tone: 'ok' as const },
      { label: t('console.failures'), values: bad, tone: 'bad' as const },
    ]);
  return { day: draw(t('console.last_24h'), counts.day), month: draw(t('console.last_30d'), counts.month) };
}

/**
 * GET /admin's figures (console.ts renders them): counts, charts, health, modules, webhook backlog.
 * One per console (consolePages), which keeps the cached aggregates; `exactCount` is the console's count cap.
 */
export function dashboardData(app: AppContext, exactCount: () => number) {
  let cached: Dashboard | null = null;
  let refreshing: Promise<Dashboard> | null = null;

  /**
   * The dashboard's aggregates (charts, active sessions, health), read at most once a minute per
   * process: only the first dashboard after a start waits for them; once they are older than the TTL
   * the next dashboard starts a refresh in the background and is answered from the old figures.
   */
  const aggregates = (): Promise<Dashboard> =>
    (refreshing ??= (async () => {
      const [counts, h, n] = await Promise.all([chartCounts(app), health(app), app.repos.sessions.countActiveCapped(new Date(), EXACT_SESSIONS)]);
      cached = { at: Date.now(), counts, health: h, sessions: n };
      return cached;
    })().finally(() => (refreshing = null)));

  return async (t: (k: string) => string): Promise<Record<string, unknown>> => {
    const d = cached ?? (await aggregates());
    if (Date.now() - d.at > DASHBOARD_TTL_MS && !refreshing)
      aggregates().catch((err: unknown) => app.logger.warn({ reason: (err as Error)?.message }, 'dashboard refresh failed'));
    const [users, backlog] = await Promise.all([
      app.services.users.list({ page: 1, limit: 1, exactCountLimit: exactCount() }),
      app.services.webhooks.pendingStats(),
    ]);
    // The modules' state as this process holds it (the hub's status reads the catalogue; /admin/modules shows that).
    const installed = new Map(app.modules.installed().map((m) => [m.id, m]));
    const modules = app.modules.registry().map((m) => {
      const state = installed.get(m.id);
      return { id: m.id, status: state ? (state.enabled ? 'installed' : 'disabled') : 'not_installed', version: state?.version ?? m.version };
    });
    return {
      title: t('console.dashboard'),
      users: { total: users.total, exact: users.totalExact },
      sessions: d.sessions,
      modules,
      backlog,
      health: Object.entries(d.health),
      charts: charts(d.counts, t),
      version: packageVersion(),
    };
  };
}
