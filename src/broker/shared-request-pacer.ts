// The request pacer of a broker gateway shared by every replica (REDIS_URL): slots are reserved
// atomically in one sorted set per gateway (Redis clock), so N replicas together keep the gateway's
// pacing, the keyed spacing (IBKR /portfolio/accounts) and a back-off after a 429.
//
// Its keys share one hash tag per gateway ({pacing:<scope>}): one Cluster slot for the script.
//
// When Redis is unreachable, or after a failover until every replica has written back (the degraded-mode
// policy, src/store/degraded-mode.ts), each replica paces alone, more strictly: its share of the rate (rate
// and spacing divided by the live replicas last seen), and nothing before one whole window has passed
// since it stopped sharing (the others may have filled the window it can no longer see). When it shares
// again, the slots it took alone are written into the shared set before it reserves there again.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../core/errors.js';
import { BACK_OFF } from '../budget/redis-budget-guard.js';
import type { RedisConnection } from '../store/redis-connection.js';
import { RedisScript } from '../store/redis-script.js';
import type { DegradedMode, SharedStore } from '../store/degraded-mode.js';
import type { ReplicaHeartbeat } from '../store/replica-heartbeat.js';
import { type Pacer, RequestPacer, type RequestPacerOptions } from './request-pacer.js';

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * KEYS: slots (zset), backoff, keyed slot times (hash). ARGV: perWindow, windowMs, minIntervalMs, maxWait, id,
 * key, key spacing (0: none). -> {ok, waitMs, why, slot}: why 1 backed off, 2 the key's turn has not come (nothing
 * reserved: wait and ask again), 3 saturated. A keyed call's spacing counts from the slot it gets.
 */
const RESERVE = new RedisScript(`${NOW}
local perWindow, windowMs, minInterval, maxWait = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local spacing = tonumber(ARGV[7])
local backoff = tonumber(redis.call('GET', KEYS[2]) or '0')
if backoff > now then return {0, backoff - now, 1} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - math.max(windowMs, minInterval))
local at = now
local n = redis.call('ZCARD', KEYS[1])
if n > 0 then
  local last = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]) + minInterval
  if last > at then at = last end
end
if n >= perWindow then
  local reopens = tonumber(redis.call('ZRANGE', KEYS[1], n - perWindow, n - perWindow, 'WITHSCORES')[2]) + windowMs
  if reopens > at then at = reopens end
end
if spacing > 0 then
  local turn = tonumber(redis.call('HGET', KEYS[3], ARGV[6]) or '')
  if turn ~= nil and turn + spacing > at then return {0, turn + spacing - now, 2} end
end
if at - now > maxWait then return {0, at - now, 3} end
redis.call('ZADD', KEYS[1], at, at .. ':' .. ARGV[5])
redis.call('PEXPIRE', KEYS[1], windowMs + maxWait + 60000)
if spacing > 0 then
  redis.call('HSET', KEYS[3], ARGV[6], at)
  redis.call('PEXPIRE', KEYS[3], spacing + maxWait + 60000)
end
return {1, at - now, 0, at}
`);

/** KEYS: slots. ARGV: windowMs, unique id, then slot times (Redis clock) taken alone. */
const MERGE = new RedisScript(`
for i = 3, #ARGV do redis.call('ZADD', KEYS[1], tonumber(ARGV[i]), ARGV[i] .. ':alone:' .. ARGV[2] .. ':' .. i) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + 60000)
return #ARGV - 2
`);

/** How late a call may leave after its shared slot: a fifth of the spacing keeps most of the margin. */
function lateMs(minIntervalMs: number): number {
  return Math.max(10, minIntervalMs / 5);
}

export class SharedRequestPacer implements Pacer {
  /** Back-off bookkeeping (escalation, Retry-After) of this replica. */
  private readonly local: RequestPacer;
  /** The pacer used while Redis is away; undefined while it is there. */
  private alone: RequestPacer | undefined;
  private readonly slotsKey: string;
  private readonly keyedKey: string;
  private readonly backoffKey: string;
  private readonly now: () => number;
  private readonly redis: RedisConnection;
  private readonly heartbeat: ReplicaHeartbeat;
  private readonly degraded: DegradedMode;

  /** `scope` names the gateway (one pacing per gateway session, whichever replica calls it). */
  constructor(
    private readonly options: RequestPacerOptions,
    shared: SharedStore,
    scope: string,
  ) {
    ({ redis: this.redis, heartbeat: this.heartbeat, degraded: this.degraded } = shared);
    this.local = new RequestPacer(options);
    this.now = options.now ?? Date.now;
    this.slotsKey = this.redis.key(`{pacing:${scope}}:slots`);
    this.keyedKey = this.redis.key(`{pacing:${scope}}:keyed`);
    this.backoffKey = this.redis.key(`{pacing:${scope}}:backoff`);
    // After a failover the window this replica shared is no longer known: pace alone until the policy trusts it.
    this.degraded.on('settling', () => this.paceAlone());
  }

  /** Where the pacing is decided right now. */
  get mode(): 'redis' | 'local-fallback' {
    return this.degraded.ledgersShared && this.alone === undefined ? 'redis' : 'local-fallback';
  }

  async acquire(key?: string): Promise<void> {
    const backedOff = this.local.backOffRemainingMs();
    if (backedOff > 0) throw this.local.unavailable(`${this.options.name} asked us to slow down`, backedOff);
    if (this.degraded.ledgersShared) {
      try {
        if (this.alone !== undefined) await this.handBack(this.alone);
        return await this.acquireShared(key);
      } catch (error) {
        if (error instanceof ApiError) throw error;
        this.redis.noteFailure(error);
      }
    }
    return this.paceAlone().acquire(key);
  }

  refused(retryAfterSeconds?: number): number {
    const waitMs = this.local.refused(retryAfterSeconds);
    this.alone?.backOffUntil(this.now() + waitMs);
    if (this.redis.ready) {
      BACK_OFF.run(this.redis.client, [this.backoffKey], [Date.now() + waitMs + this.heartbeat.clockOffsetMs]).catch((error: unknown) =>
        this.redis.noteFailure(error),
      );
    }
    return waitMs;
  }

  succeeded(): void {
    this.local.succeeded();
  }

  backOffRemainingMs(): number {
    return this.local.backOffRemainingMs();
  }

  unavailable(reason: string, waitMs: number): ApiError {
    return this.local.unavailable(reason, waitMs);
  }

  private async acquireShared(key: string | undefined): Promise<void> {
    const { name, perWindow, windowMs, minIntervalMs = 0, maxWaitMs } = this.options;
    const spacing = key === undefined ? 0 : (this.options.spacing?.[key] ?? 0);
    const started = Date.now();
    for (;;) {
      const id = randomBytes(6).toString('base64url');
      const args = [perWindow, windowMs, minIntervalMs, maxWaitMs, id, key ?? '', spacing];
      const [ok, waitMs, why, slot] = await RESERVE.run<[number, number, number, number]>(
        this.redis.client,
        [this.slotsKey, this.backoffKey, this.keyedKey],
        args,
      );
      if (ok === 1) {
        // The slot on this clock: the reply may have come late (a busy process), and the wait counts from the script.
        const due = slot - this.heartbeat.clockOffsetMs;
        if (due > Date.now()) await sleep(due - Date.now());
        // Held up past its slot, it would leave together with the next replica's call: the slot is lost, take another.
        if (Date.now() - due > lateMs(minIntervalMs) && Date.now() - started < maxWaitMs) continue;
        return this.local.depart(this.now());
      }
      if (why === 1) {
        this.local.backOffUntil(this.now() + waitMs);
        throw this.local.unavailable(`${name} asked us to slow down`, waitMs);
      }
      if (why === 3) throw this.local.unavailable(`${name} request pacing is saturated`, waitMs);
      if (waitMs > maxWaitMs) throw this.local.unavailable(`${name} allows this call once per ${spacing / 1000} s`, waitMs);
      await sleep(waitMs);
    }
  }

  /** This replica's share of the pacing, created when Redis is first found missing. */
  private paceAlone(): RequestPacer {
    if (this.alone !== undefined) return this.alone;
    const replicas = Math.max(1, this.heartbeat.replicas);
    const { perWindow, minIntervalMs = 0, spacing = {} } = this.options;
    const alone = new RequestPacer({
      ...this.options,
      perWindow: Math.max(1, Math.floor(perWindow / replicas)),
      minIntervalMs: minIntervalMs * replicas,
      spacing: Object.fromEntries(Object.entries(spacing).map(([k, ms]) => [k, ms * replicas])),
    });
    alone.pauseUntil(this.now() + this.options.windowMs);
    alone.backOffUntil(this.now() + this.local.backOffRemainingMs());
    this.alone = alone;
    return alone;
  }

  private async handBack(alone: RequestPacer): Promise<void> {
    const offset = this.heartbeat.clockOffsetMs;
    const slots = alone.recentSlots().map((t) => t - this.now() + Date.now() + offset);
    await MERGE.run(this.redis.client, [this.slotsKey], [this.options.windowMs, randomBytes(6).toString('base64url'), ...slots]);
    this.alone = undefined;
  }
}
