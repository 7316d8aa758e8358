// One autocannon measurement, reduced to the figures we report.
import autocannon from 'autocannon';

export interface Figures {
  requestsPerSecond: number;
  /** Requests answered in all, where the load generator counts them. */
  requests?: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

export async function measure(
  url: string,
  options: { connections?: number; duration?: number; headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string } = {},
): Promise<Figures> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 50,
    duration: options.duration ?? Number(process.env.BENCH_SECONDS ?? 10),
    headers: options.headers,
    // A POST with its body (an MCP tool call); autocannon refuses an explicit undefined method.
    ...(options.method === undefined ? {} : { method: options.method, body: options.body }),
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export function row(name: string, f: Figures): string {
  return `${name.padEnd(34)} ${String(f.requestsPerSecond).padStart(8)} req/s   p50 ${String(f.p50Ms).padStart(4)} ms   p99 ${String(f.p99Ms).padStart(4)} ms   non-2xx ${f.non2xx}   errors ${f.errors}`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
