import type { Cluster, Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Metrics } from './metrics.js';

/*
 * With `serve --workers N` a scrape reaches one worker. That worker asks the primary, the primary
 * asks every worker for its metrics as JSON, adds its own (jobs run there) and answers with the sum,
 * so one scrape sees the whole service.
 */
const ASK = 'gatehouse:metrics:ask';
const COLLECT = 'gatehouse:metrics:collect';
const PART = 'gatehouse:metrics:part';
const ANSWER = 'gatehouse:metrics:answer';
const TIMEOUT_MS = 5_000;

/** One process's `registry.getMetricsAsJSON()`. */
type Part = Awaited<ReturnType<Metrics['registry']['getMetricsAsJSON']>>;

interface Msg {
  type?: string;
  id?: number;
  metrics?: Part;
  text?: string;
}

/** Sums metrics JSON of several processes into Prometheus text. */
export function aggregateText(parts: Part[]): Promise<string> {
  return AggregatorRegistry.aggregate(parts).metrics();
}

/**
 * In the primary: answers workers' scrape requests with the metrics of every process; `text` is the
 * same sum for a METRICS_PORT server in the primary.
 */
export function relayClusterMetrics(cluster: Cluster, own: Metrics): { text(): Promise<string>; stop(): void } {
  let nextId = 0;
  const waiting = new Map<number, { parts: Part[]; expected: number; done: (parts: Part[]) => void }>();

  const collect = (): Promise<Part[]> =>
    new Promise((resolve) => {
      const id = ++nextId;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => Boolean(w?.isConnected()));
      const finish = (parts: Part[]) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(parts);
      };
      // A worker that does not answer in time (busy, dying) is left out rather than failing the scrape.
      const timer = setTimeout(() => finish(waiting.get(id)?.parts ?? []), TIMEOUT_MS);
      waiting.set(id, { parts: [], expected: workers.length, done: finish });
      if (!workers.length) finish([]);
      for (const w of workers) w.send({ type: COLLECT, id });
    });

  const text = async () => {
    const [mine, theirs] = await Promise.all([own.json(), collect()]);
    return aggregateText([mine, ...theirs]);
  };

  const onMessage = (worker: Worker, m: Msg) => {
    if (m?.type === PART && m.id !== undefined) {
      const w = waiting.get(m.id);
      if (!w) return;
      w.parts.push(m.metrics ?? []);
      if (w.parts.length >= w.expected) w.done(w.parts);
    } else if (m?.type === ASK && m.id !== undefined) {
      const id = m.id;
      text().then(
        (t) => worker.isConnected() && worker.send({ type: ANSWER, id, text: t }),
        () => undefined,
      );
    }
  };
  cluster.on('message', onMessage);
  return { text, stop: () => void cluster.off('message', onMessage) };
}

/** In a worker: answers the primary's collect requests, and scrapes through the primary. */
export function joinClusterMetrics(metrics: Metrics, proc: NodeJS.Process = process): () => void {
  let nextId = 0;
  const pending = new Map<number, (text: string | null) => void>();
  const onMessage = (m: Msg) => {
    if (m?.type === COLLECT && m.id !== undefined) {
      const id = m.id;
      // The primary reads the database gauges once for all (they are aggregated with max).
      void metrics.json({ gauges: false }).then(
        (json) => proc.send?.({ type: PART, id, metrics: json }),
        () => proc.send?.({ type: PART, id, metrics: [] }),
      );
    } else if (m?.type === ANSWER && m.id !== undefined) {
      pending.get(m.id)?.(m.text ?? null);
    }
  };
  proc.on('message', onMessage);
  metrics.setCollector(async () => {
    const id = ++nextId;
    const text = await new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), TIMEOUT_MS + 1_000);
      pending.set(id, (t) => {
        clearTimeout(timer);
        resolve(t);
      });
      proc.send?.({ type: ASK, id });
    });
    pending.delete(id);
    // The primary gone or too slow: this worker's own figures beat no answer.
    return text ?? aggregateText([await metrics.json()]);
  });
  return () => {
    proc.off('message', onMessage);
    metrics.setCollector(null);
  };
}
