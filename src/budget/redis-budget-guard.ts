// The budget guard shared by every replica: one Lua script prunes, checks minute, day, spacing and
// back-off, and reserves atomically in a sorted set of call times (Redis clock), so N replicas together
// never send more than the budget.
//
// When Redis is unreachable the guard decides locally and more strictly, never more loosely:
//  - it starts from the shared calls it last read (synchronised on every heartbeat);
//  - it assumes the other replicas spent, in the moments it could not see, all the minute budget
//    they could (phantom calls at the moment Redis was lost);
//  - each call of its own counts once per live replica seen, so together the replicas spend at most
//    what was left, and spacing is stretched by the same factor;
//  - never having read the shared ledger, it sends nothing until Redis is back.
// When Redis returns, its own calls and back-off are written into the shared ledger first.
//
// A live ledger also counts the calls an older version recorded under the bare upstream name, before
// ledgers were scoped by identity: every read copies the legacy calls still in the day window (under their
// own member names, so copying again changes nothing) and a later legacy back-off. An upgrade in the middle
// of a day, rolling or not, keeps the day's count; counting calls that may have been sandbox calls is
// stricter, never looser. The legacy keys age out by their own expiry.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BudgetExhaustedError } from '../core/errors.js';
import { publicName } from '../core/upstream-ids.js';
import type { RedisConnection } from '../store/redis-connection.js';
import { RedisScript } from '../store/redis-script.js';
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

/** KEYS: calls, backoff[, legacy calls, legacy backoff]. ARGV: dayMs. -> {now, backoffUntil, {member, score, ...}} */
const READ = new RedisScript(`${NOW}
if #KEYS == 4 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - day)
  local old = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
  for i = 1, #old, 2 do redis.call('ZADD', KEYS[1], old[i + 1], old[i]) end
  if #old > 0 then redis.call('PEXPIRE', KEYS[1], day + 60000) end
  local oldBackoff = tonumber(redis.call('GET', KEYS[4]) or '0')
  if oldBackoff > now and oldBackoff > tonumber(redis.call('GET', KEYS[2]) or '0') then
    redis.call('SET', KEYS[2], oldBackoff, 'PX', oldBackoff - now)
  end
end
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

/** KEYS: calls. ARGV: dayMs, then the times (Redis clock) of calls made while Redis was away. */
const MERGE = new RedisScript(`
local day = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], tonumber(ARGV[i]), ARGV[i] .. ':fallback:' .. redis.call('INCR', KEYS[1] .. ':seq')) end
redis.call('PEXPIRE', KEYS[1], day + 60000)
redis.call('PEXPIRE', KEYS[1] .. ':seq', day + 60000)
return #ARGV - 1
`);

/** While Redis is away, Retry-After cannot promise more than "try again soon". */
const FALLBACK_RETRY_CAP_MS = 60_000;

export class RedisBudgetGuard implements BudgetGuard {
  private readonly callsKey: string;
  private readonly backoffKey: string;
  /** The keys `READ` takes: this ledger's, then a legacy ledger's whose calls still count (see the header). */
  private readonly readKeys: string[];
  /** Shared calls as last read, in local time. */
  private known: number[] = [];
  private knownBackoff = 0;
  private syncedAt: number | undefined;
  private replicasAtSync = 1;
  /** Local time when this replica found Redis gone; undefined while it is there. */
  private lostAt: number | undefined;
  /** Calls and back-off decided locally, still to be written into the shared ledger. */
  private own: number[] = [];
  private ownBackoff = 0;
  private merging: Promise<void> | undefined;

  constructor(
    readonly name: string,
    readonly limits: BudgetLimits,
    private readonly redis: RedisConnection,
    private readonly heartbeat: ReplicaHeartbeat,
    private readonly maxWaitMs = MAX_PACING_WAIT_MS,
    /** Whose calls these are (see src/store/upstream-identity.ts); `name` is only for messages. */
    ledger: string = name,
    /** An older, unscoped ledger whose calls still count here (see the header comment). */
    legacyLedger?: string,
  ) {
    this.callsKey = redis.key(`budget:${ledger}:calls`);
    this.backoffKey = redis.key(`budget:${ledger}:backoff`);
    this.readKeys = [this.callsKey, this.backoffKey];
    if (legacyLedger !== undefined)
      this.readKeys.push(redis.key(`budget:${legacyLedger}:calls`), redis.key(`budget:${legacyLedger}:backoff`));
    heartbeat.on('beat', () => void this.reconcile());
    redis.on('state:ready', () => void this.reconcile());
  }

  /** The mode the guard decides in right now. */
  get mode(): 'redis' | 'local-fallback' {
    return this.redis.ready && this.lostAt === undefined ? 'redis' : 'local-fallback';
  }

  async acquire(): Promise<void> {
    if (this.redis.ready) {
      await this.reconcile();
      if (this.lostAt === undefined && (await this.reserveShared())) return;
    }
    return this.reserveLocally();
  }

  async backOff(retryAfterMs: number): Promise<void> {
    const until = Date.now() + retryAfterMs;
    this.knownBackoff = Math.max(this.knownBackoff, until);
    if (this.redis.ready && this.lostAt === undefined) {
      try {
        await BACK_OFF.run(this.redis.client, [this.backoffKey], [until + this.heartbeat.clockOffsetMs]);
        return;
      } catch (error) {
        this.lose(error);
      }
    }
    this.ownBackoff = Math.max(this.ownBackoff, until);
  }

  async snapshot(): Promise<BudgetSnapshot> {
    const now = Date.now();
    if (this.mode === 'redis' && (await this.sync())) {
      return snapshotOf({ calls: this.known, backedOffUntil: this.knownBackoff }, this.limits, now, 'redis', 'shared');
    }
    return snapshotOf(this.fallbackLedger(now), this.limits, now, 'local-fallback', 'local-fallback');
  }

  /** True once reserved (and waited for); false when Redis failed and the caller must decide locally. */
  private async reserveShared(): Promise<boolean> {
    const id = randomBytes(6).toString('base64url');
    let reply: [number, number, number];
    try {
      const { perMinute, perDay, minIntervalMs } = this.limits;
      const args = [dayOf(this.limits), minuteOf(this.limits), perMinute, perDay, minIntervalMs, this.maxWaitMs, id];
      reply = await RESERVE.run(this.redis.client, [this.callsKey, this.backoffKey], args);
    } catch (error) {
      this.lose(error);
      return false;
    }
    const [ok, delayMs] = reply;
    const now = Date.now();
    if (ok !== 1) throw this.exhausted(delayMs);
    this.known.push(now + delayMs);
    if (delayMs > 0) await sleep(delayMs);
    return true;
  }

  private async reserveLocally(): Promise<void> {
    const now = Date.now();
    this.lostAt ??= now;
    const replicas = Math.max(1, this.replicasAtSync);
    const limits = { ...this.limits, minIntervalMs: this.limits.minIntervalMs * replicas };
    const decision = decide(this.fallbackLedger(now), limits, now, this.maxWaitMs);
    if (!decision.ok) throw this.heldBack(Math.min(decision.retryAt - now, FALLBACK_RETRY_CAP_MS));
    this.own.push(decision.at);
    if (decision.at > now) await sleep(decision.at - now);
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

  /** Writes what was decided locally into the shared ledger, then reads it back. Never throws. */
  private reconcile(): Promise<void> {
    this.merging ??= this.mergeAndSync().finally(() => {
      this.merging = undefined;
    });
    return this.merging;
  }

  private async mergeAndSync(): Promise<void> {
    if (!this.redis.ready) return;
    const offset = this.heartbeat.clockOffsetMs;
    const own = this.own;
    const ownBackoff = this.ownBackoff;
    try {
      if (own.length > 0) await MERGE.run(this.redis.client, [this.callsKey], [dayOf(this.limits), ...own.map((at) => at + offset)]);
      if (ownBackoff > Date.now()) await BACK_OFF.run(this.redis.client, [this.backoffKey], [ownBackoff + offset]);
    } catch (error) {
      this.redis.noteFailure(error);
      return;
    }
    this.own = this.own.slice(own.length);
    if (this.ownBackoff === ownBackoff) this.ownBackoff = 0;
    if (await this.sync()) this.lostAt = undefined;
  }

  /** Reads the shared ledger; false when Redis did not answer. */
  private async sync(): Promise<boolean> {
    try {
      const [redisNow, backoff, flat] = await READ.run<[number, number, string[]]>(this.redis.client, this.readKeys, [dayOf(this.limits)]);
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
