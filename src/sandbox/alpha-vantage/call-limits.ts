// Alpha Vantage's limits on one key, as sliding windows: calls per day, per minute, and a burst limit
// per second. A refused call is not recorded, so it spends nothing, as upstream.
//
// The second and minute windows are measured a little short (the jitter allowance): a client that paces
// exactly at the limit sends its next call one window after the previous one, but on a real network it
// can arrive a millisecond early, and refusing it for that would make paced clients fail at random.

export interface CallLimitsOptions {
  /** 0 disables a limit. */
  perMinute: number;
  perDay: number;
  perSecond: number;
  /** How much shorter than 1 s and 60 s the burst and minute windows are measured (default 100 ms). */
  jitterAllowanceMs?: number;
}

export type LimitVerdict = 'ok' | 'day' | 'minute' | 'burst';

const SECOND_MS = 1_000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export class CallLimits {
  /** Accepted calls per key, oldest first, kept only as long as the longest enabled window. */
  private readonly calls = new Map<string, number[]>();
  private readonly horizonMs: number;
  private readonly allowanceMs: number;

  constructor(readonly options: CallLimitsOptions) {
    this.horizonMs = options.perDay > 0 ? DAY_MS : options.perMinute > 0 ? MINUTE_MS : options.perSecond > 0 ? SECOND_MS : 0;
    this.allowanceMs = options.jitterAllowanceMs ?? 100;
  }

  /** Records the call and answers 'ok', or answers which limit refuses it (the longest window first). */
  take(key: string, nowMs: number): LimitVerdict {
    if (this.horizonMs === 0) return 'ok';
    const calls = this.prune(key, nowMs);
    const { perDay, perMinute, perSecond } = this.options;
    if (perDay > 0 && calls.length >= perDay) return 'day';
    if (perMinute > 0 && countSince(calls, nowMs - (MINUTE_MS - this.allowanceMs)) >= perMinute) return 'minute';
    if (perSecond > 0 && countSince(calls, nowMs - (SECOND_MS - this.allowanceMs)) >= perSecond) return 'burst';
    calls.push(nowMs);
    return 'ok';
  }

  private prune(key: string, nowMs: number): number[] {
    let calls = this.calls.get(key);
    if (calls === undefined) {
      calls = [];
      this.calls.set(key, calls);
    }
    const keepAfter = nowMs - this.horizonMs;
    let drop = 0;
    while (drop < calls.length && (calls[drop] as number) <= keepAfter) drop += 1;
    if (drop > 0) calls.splice(0, drop);
    return calls;
  }
}

/** Calls strictly after `sinceMs` (a call exactly one window ago has left the window). */
function countSince(calls: readonly number[], sinceMs: number): number {
  let count = 0;
  for (let i = calls.length - 1; i >= 0 && (calls[i] as number) > sinceMs; i -= 1) count += 1;
  return count;
}
