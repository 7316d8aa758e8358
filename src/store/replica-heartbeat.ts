// Each replica announces itself in Redis every few seconds; the count of live replicas tells a budget
// guard which share of the remaining budget it may spend on its own if Redis goes away.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RedisConnection } from './redis-connection.js';

const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return {redis.call('ZCARD', KEYS[1]), now}
`;

export class ReplicaHeartbeat extends EventEmitter {
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private count = 1;
  /** Redis clock minus local clock, from the last beat: converts Redis times to local ones. */
  private offset = 0;

  constructor(
    private readonly redis: RedisConnection,
    private readonly intervalMs = 2_000,
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

  get clockOffsetMs(): number {
    return this.offset;
  }

  async beat(): Promise<void> {
    if (!this.redis.ready) return;
    try {
      const sentAt = Date.now();
      const [count, now] = (await this.redis.client.eval(BEAT, 1, this.redis.key('replicas'), this.id, this.intervalMs * 3)) as [
        number,
        number,
      ];
      this.count = Math.max(1, count);
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
      await this.redis.client.zrem(this.redis.key('replicas'), this.id);
    } catch {
      // Leaving is best effort: the entry expires within three beats anyway.
    }
  }
}
