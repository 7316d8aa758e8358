// What the quota benchmarks judge a provider's budget by: the calls that reached its simulator, stamped as each
// arrived, and the calls over its limits (more than the budget in any window, or closer than its spacing).
import type { SimRequestEvent, SimulatedUpstream } from '../src/sandbox/simulated-upstream.js';

/** A simulator recording when each call to `path` (every call, if undefined) arrived, and the calls by Alpha Vantage function. */
export async function countingSimulator(
  upstream: SimulatedUpstream,
  path: string | undefined,
): Promise<{ upstream: SimulatedUpstream; calls: number[]; byFunction: Record<string, number> }> {
  await upstream.listen();
  const calls: number[] = [];
  const byFunction: Record<string, number> = {};
  // `arrival`: stamped as the request arrives, before the simulator works out its answer.
  upstream.on('arrival', (event: SimRequestEvent) => {
    if (path !== undefined && event.path !== path) return;
    calls.push(Date.now());
    const fn = event.query.get('function') ?? event.path;
    byFunction[fn] = (byFunction[fn] ?? 0) + 1;
  });
  return { upstream, calls, byFunction };
}

export interface Limits {
  minuteMs: number;
  perMinute: number;
  dayMs: number;
  perDay: number;
  /** The least time between two calls. */
  spacingMs: number;
}

export interface Violations {
  minute: number;
  day: number;
  spacing: number;
}

/** Calls over each limit: more than the budget in any window, or closer than the spacing less `toleranceMs`. */
export function violations(calls: number[], limits: Limits, toleranceMs: number): Violations {
  const sorted = [...calls].sort((a, b) => a - b);
  const over = (windowMs: number, limit: number) => {
    let count = 0;
    let start = 0;
    for (let end = 0; end < sorted.length; end += 1) {
      while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start += 1;
      if (end - start + 1 > limit) count += 1;
    }
    return count;
  };
  const spacing = sorted.slice(1).filter((at, i) => at - (sorted[i] as number) < limits.spacingMs - toleranceMs).length;
  return { minute: over(limits.minuteMs, limits.perMinute), day: over(limits.dayMs, limits.perDay), spacing };
}
