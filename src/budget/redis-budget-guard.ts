// The budget guard shared by every replica: one Lua script prunes, checks minute, day, spacing and
// back-off, and reserves atomically in a sorted set of call times (Redis clock), so N replicas together
// never send more than the budget. The ledger's keys share one hash tag per ledger ({budget:<scope>}):
// one Cluster slot per ledger, ledgers spread across the Cluster.
//
// While Redis is unreachable (the degraded-mode policy, src/store/degraded-mode.ts) the guard decides
// locally and more strictly, never more loosely:
//  - it starts from the shared calls it last read (synchronised on every heartbeat);
//  - it assumes the other replicas spent, in the moments it could not see, all the minute budget
//    they could (phantom calls at the moment Redis was lost);
//  - each call of its own counts once per live replica seen, so together the replicas spend at most
//    what was left, and spacing is stretched by the same factor;
//  - never having read the shared ledger, it sends nothing until Redis is back.
// Every call it sends, shared or alone, it remembers while the windows it counts in are open. When Redis
// returns, and after a failover to a primary that may have lost the last increments, it writes them all
// back under their own member names (writing twice changes nothing): the ledger becomes the union of
// every replica's record, never less than its own.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BudgetExhaustedError } from '../core/errors.js';
import { publicName } from '../core/upstream-ids.js';
import type { RedisConnection } from '../store/redis-connection.js';
import { RedisScript } from '../store/redis-script.js';
import type { DegradedMode, SharedStore } from '../store/degraded-mode.js';
import type { ReplicaHeartbeat } from '../store/replica-heartbeat.js';
import { type BudgetGuard, type BudgetLimits, type BudgetSnapshot, MAX_PACING_WAIT_MS } from './budget-guard.js';
import { dayOf, decide, type LedgerState, minuteOf, prune } from './budget-ledger.js';
import { snapshotOf } from './memory-budget-guard.js';

/** ARGV[1] is always the day window (ms). */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local day = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - day)
`;

/** KEYS: calls, backoff. ARGV: dayMs, minuteMs, perMinute, perDay, minIntervalMs, maxWaitMs, unique id. -> {ok, delayMs, now} */
const RESERVE = new RedisScript(`${NOW}
local minute = tonumber(ARGV[2])
local perMinute, perDay = tonumber(ARGV[3]), tonumber(ARGV[4])
local spacing, maxWait = tonumber(ARGV[5]), tonumber(ARGV[6])
local at = now
local backoff = tonumber(redis.call('GET', KEYS[2]) or '0')
if backoff > at then at = backoff end
local n = redis.call('ZCARD', KEYS[1])
local function reopens(index, window)
  local r = redis.call('ZRANGE', KEYS[1], index, index, 'WITHSCORES')
  local s = tonumber(r[2]) + window
  if s > at then at = s end
end
if spacing > 0 and n > 0 then
  local r = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local s = tonumber(r[2]) + spacing
  if s > at then at = s end
end
if perMinute > 0 and n >= perMinute then reopens(n - perMinute, minute) end
if perDay > 0 and n >= perDay then reopens(n - perDay, day) end
if at - now > maxWait then return {0, at - now, now} end
redis.call('ZADD', KEYS[1], at, at .. ':' .. ARGV[7])
redis.call('PEXPIRE', KEYS[1], day + 60000)
return {1, at - now, now}
`);

/** KEYS: calls, backoff. ARGV: dayMs. -> {now, backoffUntil, {member, score, ...}} */
const READ = new RedisScript(`${NOW}
return {now, tonumber(redis.call('GET', KEYS[2]) or '0'), redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')}
`);

/** KEYS: backoff. ARGV: absolute until (Redis clock). Keeps the later of the two. */
export const BACK_OFF = new RedisScript(`
local target = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if target > current then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if target > now then redis.call('SET', KEYS[1], target, 'PX', target - now) end
end
return 1
`);

/** KEYS: calls. ARGV: dayMs, then (time on the Redis clock, member) of each call this replica sent. */
const WRITE_BACK = new RedisScript(`${NOW}
for i = 2, #ARGV, 2 do
  local at = tonumber(ARGV[i])
  if at > now - day then redis.call('ZADD', KEYS[1], at, ARGV[i + 1]) end
end
redis.call('PEXPIRE', KEYS[1], day + 60000)
return 1
`);

/**
 * The provider counts a call when it arrives. A caller that wakes later than its slot (a busy event loop, a
 * slow reply from Redis) would send it closer to the next slot than the spacing allows, and eat into the
 * spacing's margin (1.2 s paced for a 1/s plan): past this lateness it gives the slot up and queues again.
 */
const LATE_MS = 100;

/** 'sent': the call may go now; 'late': the slot was given up; 'failed': Redis did not answer. */
type Reservation = 'sent' | 'late' | 'failed';

/** While Redis is away, Retry-After cannot promise more than "try again soon". */
const FALLBACK_RETRY_CAP_MS = 60_000;

/** A call this replica sent: local time, and its time and member name in the shared ledger. */
interface SentCall {
  at: number;
  score: number;
  member: string;
}

export class RedisBudgetGuard implements BudgetGuard {
  private readonly callsKey: string;
  private readonly backoffKey: string;
  private readonly redis: RedisConnection;
  private readonly heartbeat: ReplicaHeartbeat;
  private readonly degraded: DegradedMode;
  /** Shared calls as last read, in local time. */
  private known: number[] = [];
  private knownBackoff = 0;
  private syncedAt: number | undefined;
  private replicasAtSync = 1;
  /** Local time when this replica stopped trusting the shared ledger; undefined while it does. */
  private lostAt: number | undefined;
  /** Calls decided locally (each counts once per replica in the strict local view). */
  private own: number[] = [];
  private ownBackoff = 0;
  /** Every call this replica sent within the windows counted: what it writes back. */
  private sent: SentCall[] = [];
  private merging: Promise<void> | undefined;

  constructor(
    readonly name: string,
    readonly limits: BudgetLimits,
    shared: SharedStore,
    private readonly maxWaitMs = MAX_PACING_WAIT_MS,
    /** Whose calls these are (see src/store/upstream-identity.ts); `name` is only for messages. */
    ledger: string = name,
  ) {
    ({ redis: this.redis, heartbeat: this.heartbeat, degraded: this.degraded } = shared);
    this.callsKey = this.redis.key(`{budget:${ledger}}:calls`);
    this.backoffKey = this.redis.key(`{budget:${ledger}}:backoff`);
    this.heartbeat.on('beat', () => void this.reconcile());
    this.degraded.on('settling', () => {
      this.lostAt ??= Date.now();
    });
    this.degraded.on('shared', () => void this.reconcile());
    this.degraded.onReturn(() => this.reconcile());
  }

  /** The mode the guard decides in right now. */
  get mode(): 'redis' | 'local-fallback' {
    return this.degraded.ledgersShared && this.lostAt === undefined ? 'redis' : 'local-fallback';
  }

  async acquire(): Promise<void> {
    const deadline = Date.now() + this.maxWaitMs;
    for (;;) {
      let outcome: Reservation = 'failed';
      if (this.degraded.ledgersShared) {
        if (this.lostAt !== undefined) await this.reconcile();
        if (this.lostAt === undefined) outcome = await this.reserveShared(deadline);
      }
      if (outcome === 'failed') outcome = await this.reserveLocally(deadline);
      if (outcome === 'sent') return;
    }
  }

  async backOff(retryAfterMs: number): Promise<void> {
    const until = Date.now() + retryAfterMs;
    this.knownBackoff = Math.max(this.knownBackoff, until);
    this.ownBackoff = Math.max(this.ownBackoff, until);
    if (this.mode === 'redis') {
      try {
        await BACK_OFF.run(this.redis.client, [this.backoffKey], [until + this.heartbeat.clockOffsetMs]);
        return;
      } catch (error) {
        this.lose(error);
      }
    }
  }

  async snapshot(): Promise<BudgetSnapshot> {
    const now = Date.now();
    if (this.mode === 'redis' && (await this.sync())) {
      return snapshotOf({ calls: this.known, backedOffUntil: this.knownBackoff }, this.limits, now, 'redis', 'shared');
    }
    return snapshotOf(this.fallbackLedger(now), this.limits, now, 'local-fallback', 'local-fallback');
  }

  /** Reserved and waited for; 'late' when the slot was given up; 'failed' when the caller must decide locally. */
  private async reserveShared(deadline: number): Promise<Reservation> {
    const id = randomBytes(6).toString('base64url');
    const askedAt = Date.now();
    let reply: [number, number, number];
    try {
      const { perMinute, perDay, minIntervalMs } = this.limits;
      const maxWait = Math.max(0, deadline - askedAt);
      const args = [dayOf(this.limits), minuteOf(this.limits), perMinute, perDay, minIntervalMs, maxWait, id];
      reply = await RESERVE.run(this.redis.client, [this.callsKey, this.backoffKey], args);
    } catch (error) {
      this.lose(error);
      return 'failed';
    }
    const [ok, delayMs, redisNow] = reply;
    const now = Date.now();
    if (ok !== 1) throw this.exhausted(delayMs);
    const call = { at: now + delayMs, score: redisNow + delayMs, member: `${redisNow + delayMs}:${id}` };
    this.known.push(call.at);
    this.remember(call);
    if (delayMs > 0) await sleep(delayMs);
    // The slot began no earlier than the request for it plus the delay Redis named.
    if (Date.now() - (askedAt + delayMs) <= LATE_MS) return 'sent';
    this.forget(call);
    await this.redis.client.zrem(this.callsKey, call.member).catch((error: unknown) => this.lose(error));
    return 'late';
  }

  private async reserveLocally(deadline: number): Promise<Reservation> {
    const now = Date.now();
    this.lostAt ??= now;
    const replicas = Math.max(1, this.replicasAtSync);
    const limits = { ...this.limits, minIntervalMs: this.limits.minIntervalMs * replicas };
    const decision = decide(this.fallbackLedger(now), limits, now, Math.max(0, deadline - now));
    if (!decision.ok) throw this.heldBack(Math.min(decision.retryAt - now, FALLBACK_RETRY_CAP_MS));
    this.own.push(decision.at);
    const score = decision.at + this.heartbeat.clockOffsetMs;
    const call = { at: decision.at, score, member: `${score}:alone:${randomBytes(6).toString('base64url')}` };
    this.remember(call);
    if (decision.at > now) await sleep(decision.at - now);
    if (Date.now() - decision.at <= LATE_MS) return 'sent';
    this.forget(call);
    const own = this.own.indexOf(decision.at);
    if (own >= 0) this.own.splice(own, 1);
    return 'late';
  }

  /** A slot given up unsent: it spends nothing, here or in the ledger. */
  private forget(call: SentCall): void {
    this.sent = this.sent.filter((c) => c !== call);
    const known = this.known.indexOf(call.at);
    if (known >= 0) this.known.splice(known, 1);
  }

  private remember(call: SentCall): void {
    const keep = this.limits.perDay > 0 ? dayOf(this.limits) : minuteOf(this.limits);
    const from = Date.now() - keep;
    let i = 0;
    while (i < this.sent.length && (this.sent[i] as SentCall).at <= from) i += 1;
    this.sent = i === 0 ? this.sent : this.sent.slice(i);
    this.sent.push(call);
  }
  /** The strict local view used while Redis is away (see the header comment). */
  private fallbackLedger(now: number): LedgerState {
    const lostAt = this.lostAt ?? now;
    const backedOffUntil = Math.max(this.knownBackoff, this.ownBackoff);
    if (this.syncedAt === undefined) {
      // Nothing is known about what the others spent: spend nothing.
      return { calls: [], backedOffUntil: Math.max(backedOffUntil, now + FALLBACK_RETRY_CAP_MS) };
    }
    const calls = [...prune(this.known, now, dayOf(this.limits))];
    const { perMinute, perDay } = this.limits;
    const usedDay = calls.length;
    const blindMinutes = 1 + Math.floor(Math.max(0, lostAt - this.syncedAt) / minuteOf(this.limits));
    let phantoms = perMinute > 0 ? perMinute * blindMinutes : Math.max(perDay, 0);
    if (perDay > 0) phantoms = Math.min(phantoms, Math.max(0, perDay - usedDay));
    for (let i = 0; i < phantoms; i += 1) calls.push(lostAt);
    const replicas = Math.max(1, this.replicasAtSync);
    for (const at of this.own) for (let i = 0; i < replicas; i += 1) calls.push(at);
    calls.sort((a, b) => a - b);
    return { calls: prune(calls, now, dayOf(this.limits)), backedOffUntil };
  }

  private exhausted(delayMs: number): BudgetExhaustedError {
    const seconds = Math.max(0, delayMs) / 1000;
    return new BudgetExhaustedError(`${publicName(this.name)} call budget is spent; it returns in ${Math.ceil(seconds)} s`, seconds);
  }

  /** A refusal of the strict local view: the budget may not be spent, but this replica cannot know. */
  private heldBack(delayMs: number): BudgetExhaustedError {
    const seconds = Math.max(0, delayMs) / 1000;
    return new BudgetExhaustedError(
      `${publicName(this.name)} call held back: the shared store (Redis) is unreachable, so this replica is being conservative ` +
        `with the shared call budget; try again in ${Math.ceil(seconds)} s`,
      seconds,
    );
  }

  private lose(error: unknown): void {
    this.redis.noteFailure(error);
    this.lostAt ??= Date.now();
  }

  /**
   * After Redis was lost or replaced: writes back every call this replica sent in the open windows and its
   * back-off; then, once the policy trusts the shared ledger again, reads it back. Never throws.
   */
  private reconcile(): Promise<void> {
    this.merging ??= this.writeBackAndSync().finally(() => {
      this.merging = undefined;
    });
    return this.merging;
  }

  private async writeBackAndSync(): Promise<void> {
    if (!this.redis.ready) return;
    if (this.lostAt !== undefined || this.degraded.settling) {
      const offset = this.heartbeat.clockOffsetMs;
      const own = this.own.length;
      try {
        const args = [dayOf(this.limits), ...this.sent.flatMap((call) => [call.score, call.member])];
        await WRITE_BACK.run(this.redis.client, [this.callsKey], args);
        if (this.ownBackoff > Date.now()) await BACK_OFF.run(this.redis.client, [this.backoffKey], [this.ownBackoff + offset]);
      } catch (error) {
        this.redis.noteFailure(error);
        return;
      }
      this.own = this.own.slice(own);
    }
    if (this.degraded.ledgersShared && (await this.sync())) this.lostAt = undefined;
  }

  /** Reads the shared ledger; false when Redis did not answer. */
  private async sync(): Promise<boolean> {
    try {
      const keys = [this.callsKey, this.backoffKey];
      const [redisNow, backoff, flat] = await READ.run<[number, number, string[]]>(this.redis.client, keys, [dayOf(this.limits)]);
      const offset = redisNow - Date.now();
      const calls: number[] = [];
      for (let i = 1; i < flat.length; i += 2) calls.push(Number(flat[i]) - offset);
      this.known = calls;
      this.knownBackoff = backoff > 0 ? backoff - offset : 0;
      this.syncedAt = Date.now();
      this.replicasAtSync = Math.max(this.heartbeat.replicas, 1);
      return true;
    } catch (error) {
      this.lose(error);
      return false;
    }
  }
}
