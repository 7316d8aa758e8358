// Per-caller rate limiting so that one caller cannot spend everyone's upstream quota. Keyed by the caller's
// account (src/core/caller.ts): a client key, or the address `request.ip` reads (X-Forwarded-For only behind the
// proxies TRUST_PROXY names; an IPv6 address by its /64), with a key's own rate where it has one. Counters are
// shared by all replicas through Redis (one atomic script per request, one key: any Cluster slot) and fall
// back to an in-process window while Redis is away (the degraded-mode policy, src/store/degraded-mode.ts).
// Preflights, /api/system/* and everything outside /api and /mcp are not limited. What is limited is judged on
// the route the request matched, never on its request line: `GET http://x/api/…` (absolute-form, RFC 9112
// §3.2.2) or `/%61pi/…` reach the same route as `/api/…`, and once went unlimited.
//
// Not @fastify/rate-limit's own Redis store: on a Redis error it either lets every request through
// (`skipOnError`) or fails the request, where this one keeps limiting each caller in process; and the
// hot path (plugins/app/hot-path.ts) counts in this store directly, with no Fastify request to hand it.
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import type { CallerLimiter } from '../app/hot-path.js';
import type { SharedStore } from '../../store/degraded-mode.js';
import { RedisScript } from '../../store/redis-script.js';

const WINDOW_MS = 60_000;

/** KEYS: counter. ARGV: window ms. -> {count, ms left in the window}. Fixed window from the first request. */
const HIT = new RedisScript(`
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1])) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`);

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/** In-process fixed windows, bounded so that many addresses cannot grow it without limit. */
class LocalWindows {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly maxKeys = 50_000) {}

  hit(key: string, windowMs: number, now = Date.now()): { current: number; ttl: number } {
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      if (window === undefined && this.windows.size >= this.maxKeys) this.evict(now);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { current: window.count, ttl: window.resetAt - now };
  }

  private evict(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
    // Still full: drop the oldest insertions (Map keeps insertion order).
    for (const key of this.windows.keys()) {
      if (this.windows.size < this.maxKeys) break;
      this.windows.delete(key);
    }
  }
}

function callerLimitStore(shared: SharedStore | undefined) {
  return class CallerLimitStore {
    private readonly local = new LocalWindows();

    incr(key: string, callback: Callback, timeWindow: number): void {
      if (shared === undefined) {
        callback(null, this.local.hit(key, timeWindow));
        return;
      }
      const counter = shared.redis.key(`ratelimit:${key}`);
      void shared.degraded
        .attempt(
          'rate-limit',
          async (client) => {
            const [current, ttl] = await HIT.run<[number, number]>(client, [counter], [timeWindow]);
            return { current, ttl };
          },
          () => this.local.hit(key, timeWindow),
        )
        .then((hit) => callback(null, hit));
    }

    child(): CallerLimitStore {
      return this;
    }
  };
}

/**
 * Whether requests a route answers count in the per-caller limit: its path as declared, not as a caller spelt it.
 * The API routes and /mcp (an agent's calls spend the same quota a page's do).
 */
export function limitedRoute(route: string | undefined): boolean {
  if (route === '/mcp') return true;
  return route?.startsWith('/api/') === true && !route.startsWith('/api/system/');
}

function isLimited(request: FastifyRequest): boolean {
  return request.method !== 'OPTIONS' && limitedRoute(request.routeOptions.url);
}

/**
 * The per-caller limit's store, built with the app (app.ts) so that the hot path and @fastify/rate-limit count
 * the same callers in the same windows; undefined when RATE_LIMIT_PER_MINUTE is 0.
 */
export function callerLimiter(perMinute: number, shared: SharedStore | undefined): CallerLimiter | undefined {
  if (perMinute <= 0) return undefined;
  const store = new (callerLimitStore(shared))();
  return { max: perMinute, windowMs: WINDOW_MS, incr: (key, callback, windowMs) => store.incr(key, callback, windowMs), store };
}

/** @fastify/rate-limit on the root instance, before the routes it limits are added (they declare it). */
export const rateLimiting = fp(
  async (app: FastifyInstance, { limiter }: { limiter: CallerLimiter | undefined }) => {
    if (limiter === undefined) return;
    await app.register(rateLimit, {
      global: true,
      timeWindow: limiter.windowMs,
      hook: 'onRequest',
      // The plugin constructs its store; this constructor hands it the one instance the hot path also counts in.
      store: function SharedStore() {
        return limiter.store;
      } as never,
      allowList: (request) => !isLimited(request) || request.caller.key?.ratePerMinute === 0,
      keyGenerator: (request) => request.caller.account,
      max: (request) => request.caller.key?.ratePerMinute ?? limiter.max,
      // The Retry-After header is set by the error handler from the ApiError, like every other 429.
      addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': false },
      errorResponseBuilder: (_request, context) =>
        new ApiError('RATE_LIMITED', `too many requests from this caller: the limit is ${context.max} per minute`, {
          retryAfterSeconds: Math.max(1, context.ttl / 1000),
        }),
    });
  },
  { name: 'mdp-rate-limit', fastify: '5.x', dependencies: ['mdp-request-hygiene', 'mdp-caller-identity'] },
);
