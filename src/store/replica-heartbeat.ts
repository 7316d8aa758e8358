// Each replica announces itself in Redis every few seconds; the count of live replicas tells a budget
// guard which share of the remaining budget it may spend on its own if Redis goes away. Each beat also
// says which primary epoch this replica has written its records back into (degraded-mode.ts), and hears
// how many live replicas have not yet: after a failover, shared ledgers are trusted once that is none.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RedisConnection } from './redis-connection.js';
import { RedisScript } from './redis-script.js';

/** KEYS: live replicas (zset), their written-back epochs (hash). ARGV: id, ttl ms, this one's epoch, the current epoch. */
const BEAT = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local pending = 0
local epochs = redis.call('HGETALL', KEYS[2])
for i = 1, #epochs, 2 do
  if not redis.call('ZSCORE', KEYS[1], epochs[i]) then redis.call('HDEL', KEYS[2], epochs[i])
  elseif epochs[i + 1] ~= ARGV[4] then pending = pending + 1 end
end
redis.call('PEXPIRE', KEYS[1], ttl * 2)
redis.call('PEXPIRE', KEYS[2], ttl * 2)
return {redis.call('ZCARD', KEYS[1]), now, pending}
`);

export class ReplicaHeartbeat extends EventEmitter {
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private count = 1;
  private waiting = 0;
  /** Redis clock minus local clock, from the last beat: converts Redis times to local ones. */
  private offset = 0;
  constructor(
    private readonly redis: RedisConnection,
    readonly intervalMs = 2_000,
    /** The epoch this replica has written back into; the degraded-mode policy holds it back after a failover. */
    private readonly writtenBack: () => string = () => redis.epoch,
  ) {
    super();
  }

  start(): void {
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.intervalMs);
    this.timer.unref();
  }

  /** Live replicas seen at the last successful beat, this one included (at least 1). */
  get replicas(): number {
    return this.count;
  }

  /** Live replicas that had not written back into the current primary at the last beat. */
  get pending(): number {
    return this.waiting;
  }

  get clockOffsetMs(): number {
    return this.offset;
  }

  async beat(): Promise<void> {
    if (!this.redis.ready) return;
    try {
      await this.redis.checkPrimary();
      const sentAt = Date.now();
      const keys = [this.redis.key('{replicas}'), this.redis.key('{replicas}:written-back')];
      const args = [this.id, this.intervalMs * 3, this.writtenBack(), this.redis.epoch];
      const [count, now, pending] = await BEAT.run<[number, number, number]>(this.redis.client, keys, args);
      this.count = Math.max(1, count);
      this.waiting = pending;
      this.offset = now - Math.round((sentAt + Date.now()) / 2);
      this.emit('beat');
    } catch (error) {
      this.redis.noteFailure(error);
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (!this.redis.ready) return;
    try {
      await this.redis.client.zrem(this.redis.key('{replicas}'), this.id);
    } catch {
      // Leaving is best effort: the entry expires within three beats anyway.
    }
  }
}
