/*
 * The cost of one hit on the Redis rate limiter, with leases and without (maxLease 0: a script call for
 * every hit, or for the callers that queued behind the call in flight): `node dist/bench/limiter-cost.js`
 * after `npm run build`. The Redis store itself (no fallback: a slow reply on a busy machine must not
 * switch a round to the in-process budget), 50 callers in flight on one hot key (one session's or one
 * bridge secret's budget), alternating rounds; prints hits per second and process CPU µs per hit.
 */
import { randomUUID } from 'node:crypto';
import { connectRedis } from '../src/cache/redis-client.js';
import { createLogger } from '../src/log/logger.js';
import { createRedisRateLimiter } from '../src/limits/rate-limiter.js';

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const HITS = Number(process.env.BENCH_HITS ?? 50_000);
const IN_FLIGHT = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function main(): Promise<void> {
  const logger = createLogger('silent');
  const client = await connectRedis(url, logger);
  const prefix = `ghbench:lease:${randomUUID()}:`;
  const rule = { points: 1_000_000_000, durationSec: 300 };
  const results: Record<string, { perSec: number[]; cpuUs: number[]; calls: number[] }> = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const maxLease of [0, 64]) {
        const name = maxLease === 0 ? 'no leases' : 'leases';
        const stats = { calls: 0 };
        const limiter = createRedisRateLimiter(client, prefix, { maxLease, stats });
        const key = `session:${randomUUID()}`;
        let left = HITS;
        const cpu0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        await Promise.all(
          Array.from({ length: IN_FLIGHT }, async () => {
            while (left-- > 0) {
              const r = await limiter.consume('session', key, rule);
              if (!r.allowed) throw new Error('refused');
            }
          }),
        );
        const sec = Number(process.hrtime.bigint() - t0) / 1e9;
        const cpu = process.cpuUsage(cpu0);
        const r = (results[name] ??= { perSec: [], cpuUs: [], calls: [] });
        r.perSec.push(HITS / sec);
        r.cpuUs.push((cpu.user + cpu.system) / HITS);
        r.calls.push(stats.calls);
      }
    }
  } finally {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await client.del(keys);
    client.destroy();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(18)} ${median(r.perSec).toFixed(0).padStart(9)} hits/s  ${median(r.cpuUs).toFixed(2).padStart(7)} µs CPU/hit  ${median(r.calls)} Redis calls for ${HITS} hits`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
