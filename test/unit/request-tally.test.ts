import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestTally } from '../../src/metrics/request-tally.js';
import { createMetrics } from '../../src/metrics/metrics.js';

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** prom-client's own counter and histogram, and the tally, fed the same answers: their registries' text and JSON. */
async function both(answers: [string, string, number, number][]) {
  const plain = new Registry();
  const requests = new Counter({ name: 'req_total', help: 'h', labelNames: ['method', 'route', 'status'], registers: [plain] });
  const latency = new Histogram({ name: 'lat_seconds', help: 'h', labelNames: ['method', 'route'], buckets: BOUNDS, registers: [plain] });
  const tallied = new Registry();
  const tally = new RequestTally(BOUNDS);
  tally.register(tallied, { name: 'req_total', help: 'h' }, { name: 'lat_seconds', help: 'h' });
  for (const [method, route, status, seconds] of answers) {
    requests.inc({ method, route, status: String(status) });
    latency.observe({ method, route }, seconds);
    tally.record(method, route, status, seconds);
  }
  return { plain, tallied };
}

const sorted = (text: string) => text.split('\n').sort().join('\n');

/** A registry's JSON with each metric's series in one order (the order of series carries no meaning). */
async function json(r: Registry) {
  const key = (v: { labels: object; metricName?: string }) => `${v.metricName ?? ''}${JSON.stringify(v.labels)}`;
  return (await r.getMetricsAsJSON()).map((m) => ({ ...m, values: [...m.values].sort((a, b) => key(a).localeCompare(key(b))) }));
}

describe('RequestTally', () => {
  it("when fed any answers, then the registry's text and JSON are prom-client's own, also after a second scrape and more answers", async () => {
    const answer = fc.tuple(
      fc.constantFrom('GET', 'POST', 'HEAD'),
      fc.constantFrom('/auth/validation', '/auth/bridge/validate', 'unmatched'),
      fc.constantFrom(200, 401, 429, 503),
      // Bounds themselves (le is inclusive), between them, above the last, and zero.
      fc.oneof(fc.constantFrom(0, ...BOUNDS, 11), fc.double({ min: 0, max: 12, noNaN: true })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { maxLength: 60 }), fc.array(answer, { maxLength: 20 }), async (first, more) => {
        const { plain, tallied } = await both(first);
        expect(sorted(await tallied.metrics())).toBe(sorted(await plain.metrics()));
        // A scrape hands the counts over once: a second one, and one after more answers, still agree.
        expect(sorted(await tallied.metrics())).toBe(sorted(await plain.metrics()));
        const again = await both([...first, ...more]);
        expect(sorted(await again.tallied.metrics())).toBe(sorted(await again.plain.metrics()));
        expect(await json(again.tallied)).toEqual(await json(again.plain));
      }),
      { numRuns: 200 },
    );
  });

  it('when two workers report, then the cluster sum is the sum of both', async () => {
    const a = await both([
      ['GET', '/auth/validation', 200, 0.0004],
      ['GET', '/auth/validation', 401, 0.002],
    ]);
    const b = await both([['GET', '/auth/validation', 200, 0.03]]);
    const sum = AggregatorRegistry.aggregate([await a.tallied.getMetricsAsJSON(), await b.tallied.getMetricsAsJSON()]);
    const expected = AggregatorRegistry.aggregate([await a.plain.getMetricsAsJSON(), await b.plain.getMetricsAsJSON()]);
    expect(sorted(await sum.metrics())).toBe(sorted(await expected.metrics()));
    expect(await sum.metrics()).toContain('lat_seconds_count{method="GET",route="/auth/validation"} 3');
  });

  it("when the app's metrics count requests and lookups, then a scrape shows them once each", async () => {
    const m = createMetrics();
    m.httpRequest('GET', '/auth/validation', 200, 0.0003);
    m.httpRequest('GET', '/auth/validation', 200, 0.0007);
    m.cacheLookup('session', 'local');
    m.cacheLookup('session', 'local');
    m.cacheLookup('user', 'miss');
    const text = await m.scrape();
    expect(text).toContain('gatehouse_http_requests_total{method="GET",route="/auth/validation",status="200"} 2');
    expect(text).toContain('gatehouse_http_request_duration_seconds_bucket{le="0.0005",method="GET",route="/auth/validation"} 1');
    expect(text).toContain('gatehouse_http_request_duration_seconds_count{method="GET",route="/auth/validation"} 2');
    expect(text).toContain('gatehouse_cache_lookups_total{cache="session",result="local"} 2');
    expect(text).toContain('gatehouse_cache_lookups_total{cache="user",result="miss"} 1');
    expect(text).not.toContain('result="db"');
    m.cacheLookup('session', 'local');
    expect(await m.scrape()).toContain('gatehouse_cache_lookups_total{cache="session",result="local"} 3');
  });
});
