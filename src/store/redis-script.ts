// A Lua script sent once and then run by its SHA (EVALSHA), resent when Redis has forgotten it (a
// restart or SCRIPT FLUSH). Each script runs atomically: that is what keeps N replicas inside one budget.
import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';

export class RedisScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run<T>(client: RedisClient, keys: string[], args: (string | number)[]): Promise<T> {
    try {
      return (await client.evalsha(this.sha, keys.length, ...keys, ...args)) as T;
    } catch (error) {
      if (!String((error as Error).message).includes('NOSCRIPT')) throw error;
      return (await client.eval(this.lua, keys.length, ...keys, ...args)) as T;
    }
  }
}
