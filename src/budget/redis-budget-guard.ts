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
//
// Fair shares (fair-share.ts) are decided inside the same script: each call's member names the account it was
// put to (`<time>:<id>|<weight>|<account>`), so the script counts what each caller spent in a window, for
// every replica at once.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Caller, currentCallers } from '../core/caller.js';
import { BudgetExhaustedError } from '../core/errors.js';
import { publicName } from '../core/upstream-ids.js';
import type { RedisConnection } from '../store/redis-connection.js';
import { RedisScript } from '../store/redis-script.js';
import type { DegradedMode, SharedStore } from '../store/degraded-mode.js';
import type { ReplicaHeartbeat } from '../store/replica-heartbeat.js';
import { type BudgetGuard, type BudgetLimits, type BudgetSnapshot, MAX_PACING_WAIT_MS } from './budget-guard.js';
import { dayOf, type LedgerCall, type LedgerState, minuteOf, prune } from './budget-ledger.js';
import { refusalOf } from './budget-refusal.js';
import { type Claimant, decide, fairWindows } from './fair-share.js';
import { snapshotOf } from './memory-budget-guard.js';
import { ShareTally } from './share-tally.js';

/** ARGV[1] is always the day window (ms). */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local day = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - day)
`;

/**
 * KEYS: calls, backoff, held. ARGV: dayMs, minuteMs, perMinute, perDay, minIntervalMs, maxWaitMs, unique id,
 * calls kept back a minute, calls kept back a day, then (account, weight) of each claimant.
 * -> {1, delayMs, now, claimant index (0-based)} or {0, delayMs until a retry, now, hold: 0 budget, 1 minute, 2 day}.
 * The same decision as fair-share.ts `decide`, over the shared ledger.
 * @internal
 */
export const RESERVE = new RedisScript(`${NOW}
local minute = tonumber(ARGV[2])
local perMinute, perDay = tonumber(ARGV[3]), tonumber(ARGV[4])
local spacing, maxWait = tonumber(ARGV[5]), tonumber(ARGV[6])
local keptMinute, keptDay = tonumber(ARGV[8]), tonumber(ARGV[9])
local n = redis.call('ZCARD', KEYS[1])
local function score(index)
  return tonumber(redis.call('ZRANGE', KEYS[1], index, index, 'WITHSCORES')[2])
end
local at = now
local backoff = tonumber(redis.call('GET', KEYS[2]) or '0')
if backoff > at then at = backoff end
if spacing > 0 and n > 0 then at = math.max(at, score(n - 1) + spacing) end
if perMinute > 0 and n >= perMinute then at = math.max(at, score(n - perMinute) + minute) end
if perDay > 0 and n >= perDay then at = math.max(at, score(n - perDay) + day) end
if at - now > maxWait then return {0, at - now, now, 0} end
-- Each window that keeps calls back: its open calls, its length, its hold code; and who spent in it, newest first.
local windows = {}
if keptMinute > 0 then windows[#windows + 1] = {perMinute - keptMinute, minute, 1} end
if keptDay > 0 then windows[#windows + 1] = {perDay - keptDay, day, 2} end
for _, window in ipairs(windows) do
  local byAccount, order = {}, {}
  local members = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window[2]), '+inf', 'WITHSCORES')
  for i = #members - 1, 1, -2 do
    local member = members[i]
    local a = string.find(member, '|', 1, true)
    local b = a and string.find(member, '|', a + 1, true)
    local who, w = '', 1
    if b then who, w = string.sub(member, b + 1), tonumber(string.sub(member, a + 1, b - 1)) or 1 end
    local entry = byAccount[who]
    if not entry then
      entry = {spent = 0, weight = w, times = {}}
      byAccount[who] = entry
      order[#order + 1] = who
    end
    entry.spent = entry.spent + 1
    entry.times[#entry.times + 1] = tonumber(members[i + 1])
  end
  window[4], window[5] = byAccount, order
end
local function shareOf(window, account, weight)
  local others, weights = {}, weight
  for _, who in ipairs(window[5]) do
    if who ~= account then
      others[#others + 1] = window[4][who]
      weights = weights + window[4][who].weight
    end
  end
  table.sort(others, function(x, y) return x.spent / x.weight < y.spent / y.weight end)
  local left = window[1]
  for _, other in ipairs(others) do
    if other.spent / other.weight > left / weights then break end
    left = left - other.spent
    weights = weights - other.weight
  end
  return left / weights * weight
end
local refusal, hold = nil, 0
for i = 10, #ARGV, 2 do
  local account, weight = ARGV[i], tonumber(ARGV[i + 1])
  local held, why = nil, 0
  for _, window in ipairs(windows) do
    local mine = window[4][account]
    local spent = mine and mine.spent or 0
    local share = shareOf(window, account, weight)
    if spent >= share then
      local leaving = mine and mine.times[math.ceil(share)] or now
      local retry = math.max(at, leaving + window[2])
      if not held or retry > held then held, why = retry, window[3] end
    end
  end
  if not held then
    redis.call('ZADD', KEYS[1], at, at .. ':' .. ARGV[7] .. '|' .. ARGV[i + 1] .. '|' .. account)
    redis.call('PEXPIRE', KEYS[1], day + 60000)
    return {1, at - now, now, (i - 10) / 2}
  end
  if not refusal or held < refusal then refusal, hold = held, why end
end
for i = 10, #ARGV, 2 do redis.call('ZADD', KEYS[3], now, ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - day)
redis.call('PEXPIRE', KEYS[3], day + 60000)
return {0, refusal - now, now, hold}
`);

/**
 * KEYS: calls, backoff, held. ARGV: dayMs, minuteMs.
 * -> {now, backoffUntil, {member, score, ...}, accounts held to their share this minute, this day}
 */
const READ = new RedisScript(`${NOW}
local held = function(window) return redis.call('ZCOUNT', KEYS[3], '(' .. (now - window), '+inf') end
return {now, tonumber(redis.call('GET', KEYS[2]) or '0'), redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES'), held(tonumber(ARGV[2])), held(day)}
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

/** A call this replica sent: its ledger entry (local time), and its time and member name in the shared ledger. */
interface SentCall {
  call: LedgerCall;
  score: number;
  member: string;
}

/** The shared ledger's member of a call: its time, a unique id, and the account it was put to. */
function memberOf(score: number, id: string, claimant: Claimant): string {
  return `${score}:${id}|${claimant.weight}|${claimant.account}`;
}

/** A member's account and weight; '' and 1 for a member from before fair shares. */
function ownerOf(member: string): Pick<LedgerCall, 'account' | 'weight'> {
  const first = member.indexOf('|');
  const second = first < 0 ? -1 : member.indexOf('|', first + 1);
  if (second < 0) return { account: '', weight: 1 };
  return { account: member.slice(second + 1), weight: Number(member.slice(first + 1, second)) || 1 };
}

export class RedisBudgetGuard implements BudgetGuard {
  readonly tally = new ShareTally();
  private readonly callsKey: string;
  private readonly backoffKey: string;
  private readonly heldKey: string;
  private readonly redis: RedisConnection;
  private readonly heartbeat: ReplicaHeartbeat;
  private readonly degraded: DegradedMode;
  /** Shared calls as last read, in local time. */
  private known: LedgerCall[] = [];
  private knownBackoff = 0;
  /** Accounts held to their share in the last minute and day, as last read. */
  private knownHeld = { minute: 0, day: 0 };
  private syncedAt: number | undefined;
  private replicasAtSync = 1;
  /** Local time when this replica stopped trusting the shared ledger; undefined while it does. */
  private lostAt: number | undefined;
  /** Calls decided locally (each counts once per replica in the strict local view). */
  private own: LedgerCall[] = [];
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
    this.heldKey = this.redis.key(`{budget:${ledger}}:held`);
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
    const claimants = currentCallers();
    for (;;) {
      let outcome: Reservation = 'failed';
      if (this.degraded.ledgersShared) {
        if (this.lostAt !== undefined) await this.reconcile();
        if (this.lostAt === undefined) outcome = await this.reserveShared(deadline, claimants);
      }
      if (outcome === 'failed') outcome = await this.reserveLocally(deadline, claimants);
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
      const held = (ms: number) => (ms <= minuteOf(this.limits) ? this.knownHeld.minute : this.knownHeld.day);
      return snapshotOf({ calls: this.known, backedOffUntil: this.knownBackoff }, this.limits, now, 'redis', 'shared', held);
    }
    const held = (ms: number) => this.tally.heldSince(now - ms);
    return snapshotOf(this.fallbackLedger(now), this.limits, now, 'local-fallback', 'local-fallback', held);
  }

  /** Reserved and waited for; 'late' when the slot was given up; 'failed' when the caller must decide locally. */
  private async reserveShared(deadline: number, claimants: readonly Caller[]): Promise<Reservation> {
    const id = randomBytes(6).toString('base64url');
    const askedAt = Date.now();
    let reply: [number, number, number, number];
    try {
      const { perMinute, perDay, minIntervalMs } = this.limits;
      const maxWait = Math.max(0, deadline - askedAt);
      const kept = { minute: 0, day: 0 };
      for (const window of fairWindows(this.limits)) kept[window.name] = window.reserved;
      const args = [dayOf(this.limits), minuteOf(this.limits), perMinute, perDay, minIntervalMs, maxWait, id, kept.minute, kept.day];
      for (const claimant of claimants) args.push(claimant.account, claimant.weight);
      reply = await RESERVE.run(this.redis.client, [this.callsKey, this.backoffKey, this.heldKey], args);
    } catch (error) {
      this.lose(error);
      return 'failed';
    }
    const [ok, delayMs, redisNow, which] = reply;
    const now = Date.now();
    if (ok !== 1) {
      const hold = (['budget', 'minute', 'day'] as const)[which] ?? 'budget';
      if (hold !== 'budget') this.tally.refused(claimants, now);
      throw refusalOf(this.name, this.limits, hold, delayMs, claimants);
    }
    const charged = claimants[which] as Caller;
    const score = redisNow + delayMs;
    const call = { at: now + delayMs, account: charged.account, weight: charged.weight };
    const sent = { call, score, member: memberOf(score, id, charged) };
    this.known.push(call);
    this.remember(sent);
    if (delayMs > 0) await sleep(delayMs);
    // The slot began no earlier than the request for it plus the delay Redis named.
    if (Date.now() - (askedAt + delayMs) <= LATE_MS) {
      this.tally.sent(charged);
      return 'sent';
    }
    this.forget(sent);
    await this.redis.client.zrem(this.callsKey, sent.member).catch((error: unknown) => this.lose(error));
    return 'late';
  }

  private async reserveLocally(deadline: number, claimants: readonly Caller[]): Promise<Reservation> {
    const now = Date.now();
    this.lostAt ??= now;
    const replicas = Math.max(1, this.replicasAtSync);
    const limits = { ...this.limits, minIntervalMs: this.limits.minIntervalMs * replicas };
    const decision = decide(this.fallbackLedger(now), limits, now, Math.max(0, deadline - now), claimants);
    if (!decision.ok) {
      if (decision.hold !== 'budget') {
        this.tally.refused(claimants, now);
        throw refusalOf(this.name, this.limits, decision.hold, decision.retryAt - now, claimants);
      }
      throw this.heldBack(Math.min(decision.retryAt - now, FALLBACK_RETRY_CAP_MS));
    }
    const charged = claimants[decision.claimant] as Caller;
    const call = { at: decision.at, account: charged.account, weight: charged.weight };
    this.own.push(call);
    const score = decision.at + this.heartbeat.clockOffsetMs;
    const sent = { call, score, member: memberOf(score, `alone:${randomBytes(6).toString('base64url')}`, charged) };
    this.remember(sent);
    if (decision.at > now) await sleep(decision.at - now);
    if (Date.now() - decision.at <= LATE_MS) {
      this.tally.sent(charged);
      return 'sent';
    }
    this.forget(sent);
    const own = this.own.indexOf(call);
    if (own >= 0) this.own.splice(own, 1);
    return 'late';
  }

  /** A slot given up unsent: it spends nothing, here or in the ledger. */
  private forget(sent: SentCall): void {
    this.sent = this.sent.filter((c) => c !== sent);
    const known = this.known.indexOf(sent.call);
    if (known >= 0) this.known.splice(known, 1);
  }

  private remember(sent: SentCall): void {
    const keep = this.limits.perDay > 0 ? dayOf(this.limits) : minuteOf(this.limits);
    const from = Date.now() - keep;
    let i = 0;
    while (i < this.sent.length && (this.sent[i] as SentCall).call.at <= from) i += 1;
    this.sent = i === 0 ? this.sent : this.sent.slice(i);
    this.sent.push(sent);
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
    // What the others may have spent unseen counts as one caller's: it never makes anyone's share larger.
    for (let i = 0; i < phantoms; i += 1) calls.push({ at: lostAt, account: '', weight: 1 });
    const replicas = Math.max(1, this.replicasAtSync);
    for (const call of this.own) for (let i = 0; i < replicas; i += 1) calls.push(call);
    calls.sort((a, b) => a.at - b.at);
    return { calls: prune(calls, now, dayOf(this.limits)), backedOffUntil };
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
        const args = [dayOf(this.limits), ...this.sent.flatMap((sent) => [sent.score, sent.member])];
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
      const keys = [this.callsKey, this.backoffKey, this.heldKey];
      const args = [dayOf(this.limits), minuteOf(this.limits)];
      const [redisNow, backoff, flat, heldMinute, heldDay] = await READ.run<[number, number, string[], number, number]>(
        this.redis.client,
        keys,
        args,
      );
      const offset = redisNow - Date.now();
      const calls: LedgerCall[] = [];
      for (let i = 1; i < flat.length; i += 2) calls.push({ at: Number(flat[i]) - offset, ...ownerOf(flat[i - 1] as string) });
      this.known = calls;
      this.knownHeld = { minute: heldMinute, day: heldDay };
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
