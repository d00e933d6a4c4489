// The package ships no types; this covers what the benchmark uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    [k: string]: number;
  }
  export interface Result {
    title?: string;
    url: string;
    connections: number;
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { total: number; sent: number };
    throughput: Histogram;
  }
  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    duration?: number;
    pipelining?: number;
    timeout?: number;
    title?: string;
    workers?: number;
    requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer; setupRequest?: unknown }[];
  }
  interface Instance extends PromiseLike<Result> {
    stop(): void;
    /** Each answer: its status and its time from request to response, in ms (fractional). */
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void): this;
  }
  function autocannon(opts: Options): Instance;
  export default autocannon;
}
