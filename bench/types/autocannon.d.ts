/**
 * Minimal types for the part of autocannon 8's programmatic API the benchmark uses
 * (the package ships no types and @types/autocannon is not installed).
 */
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      pipelining?: number;
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
    }
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      requests: Histogram & { sent: number };
      latency: Histogram & { totalCount: number };
      throughput: Histogram;
    }
    interface Instance extends PromiseLike<Result> {
      stop(): void;
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
    }
  }
  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
