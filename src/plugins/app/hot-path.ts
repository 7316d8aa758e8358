// A micro-cache in front of Fastify. A dashboard asks the same few URLs over and over; once the full
// pipeline has answered a URL with a fresh cache entry, repeats of that exact URL are answered from the
// raw HTTP handler until the entry stops being fresh, skipping routing, hooks and per-request loggers.
//
// It replays the header set the pipeline produced for that URL (CORS, security, mode, ETag, content
// type, Cache-Control), so the two paths cannot drift apart; only per-request values are recomputed:
// request id, Age, X-Cache, the caller's rate-limit counters (from the limiter's own store, keyed by the
// address Fastify's request.ip reads under TRUST_PROXY) and, under a CORS_ORIGINS list, the one CORS header
// that depends on the request's Origin. Anything it cannot answer exactly as the pipeline would (other
// methods, bodies, stale entries, private answers, a caller over its limit, shutdown) falls through to Fastify.
// docs/explanation/fast-path.md says the same for operators.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { CacheEntry } from '../../cache/cache-store.js';
import { addressCaller, type Caller } from '../../core/caller.js';
import { callerAddress } from '../../core/networks.js';
import { type RequestLog, redactUrl, SharedFields } from '../../log/logger.js';
import { limitedRoute } from '../external/rate-limit.js';
import { type LimitValues, ReplayedHead } from './replayed-head.js';
import { lacksHost } from './request-hygiene.js';
import { matchesEtag } from './send-cached.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Heads {
  ok: ReplayedHead;
  notModified: ReplayedHead;
}

/** The per-caller limiter's store, shared with @fastify/rate-limit (`store` is the instance the plugin is given). */
export interface CallerLimiter {
  max: number;
  windowMs: number;
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, windowMs: number): void;
  store: unknown;
}

export type RequestRecorder = (method: string, route: string, status: number, seconds: number, cache: string) => void;

interface HotEntry {
  entry: CacheEntry;
  route: string;
  /** A string, not a Buffer: Node then sends head and body as one chunk. */
  body: string;
  /** The body's length in bytes: its Content-Length, and its weight in the LRU. */
  bytes: number;
  etag: string;
  /** Whether the route counts in the per-caller limit: judged on the route the pipeline matched, as @fastify/rate-limit judges it. */
  limited: boolean;
  /** The URL as the request line logs it (redacted once, as the pipeline redacts it per request: redactUrl). */
  loggedUrl: string | undefined;
  /** The request line's fields from method to cache of a hit answered within the millisecond: GET 200, GET 304, HEAD 200, HEAD 304. */
  lines: (SharedFields | undefined)[];
  /** `Age` as sent at `ageSeconds`: the same text for every hit within that second. */
  ageSeconds: number;
  age: string;
  /** The heads without Access-Control-Allow-Origin: every request's under CORS_ORIGINS=* (its `*` replayed), else those whose Origin is not allowed. */
  plain: Heads;
  /** Under a CORS_ORIGINS list, the heads for an allowed Origin, with its slot. */
  allowed: Heads | undefined;
  onAnswer: HotAnswerHook | undefined;
}

/** Told of each hot answer (a quote's demand and early refresh); `caller` says whose account a refresh it starts is put to. */
export type HotAnswerHook = (entry: CacheEntry, caller: () => Caller) => void;

/**
 * Every hook a route the hot path answers runs, by kind and function name, with how a hot answer comes out
 * the same without it. A hook not listed here would be skipped on hot answers:
 * test/plugins/app/hot-path-inventory.test.ts fails until it is accounted for (or the hot path stands aside).
 * @internal
 */
export const HOOKS_ACCOUNTED_FOR: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  onRequest: {
    edgeHeaders: 'replayed from the pipeline answer; the request id is recomputed per request',
    closingAnswer: 'the hot path is disabled when the close begins, so the pipeline answers 503 SHUTTING_DOWN',
    callerIdentity:
      'an anonymous caller is its address, as the hot path reads it (accountOf for the limit, the caller of an early refresh); with CLIENT_KEYS set, a request with an Authorization header goes to the pipeline, and an answer to a keyed caller is never remembered (its rate-limit headers are its own)',
    preflightCheck: 'OPTIONS never reaches the hot path',
    brokerAccess:
      'acts only on routes that declare broker data, whose answers are private and carry Vary: the hot path replays public answers only, so the pipeline judges every broker caller',
    mcpAccess:
      'acts only on the /mcp routes (config.mcp), which send nothing through sendCached: the hot path never holds one of their answers',
    handleCors:
      'its headers are replayed; under a CORS_ORIGINS list, Access-Control-Allow-Origin is computed per request as @fastify/cors computes it (cors.ts marketAllowOrigin); a route with its own CORS rule is never remembered',
    requestHygiene: 'a request with a body falls through to the pipeline; a remembered URL passed the length check',
    anonymous:
      "@fastify/rate-limit's: the hot path counts the caller in the limiter's own store, same windows, keyed by request.ip's address under TRUST_PROXY (networks.ts callerAddress), on the routes the limit covers (judged on the route the pipeline matched, rate-limit.ts limitedRoute), and falls through when over",
    hostRequired: 'a request without the Host header HTTP/1.1 requires falls through to the pipeline (lookup), which refuses it',
  },
  preValidation: {
    preValidation: "/query's function name, read as Alpha Vantage reads it: only an exact URL the pipeline already answered is replayed",
    queryValues: 'the same: the URL was read (trimmed, refused characters, case) when the pipeline answered it',
    strictIntegers: 'the same: the URL was checked when the pipeline answered it',
  },
  onSend: { headRouteOnSendHandler: "Fastify's HEAD answer: the hot path answers HEAD with the GET's headers and no body" },
  onResponse: { recordMetrics: 'the hot path records each answer through the same recorder' },
};

/** Recomputed for every request; everything else is replayed. */
const PER_REQUEST = new Set(['x-request-id', 'age', 'x-cache', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'content-length']);
const REQUEST_ID = /^[\w.:-]{1,64}$/;

export function requestId(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

export interface HotPathOptions {
  /** TRUST_PROXY as Fastify is given it (app.ts), so the caller's address is request.ip's; undefined: trust none. */
  trustProxy: ((address: string, hop: number) => boolean) | undefined;
  /**
   * Access-Control-Allow-Origin for a request's Origin under a CORS_ORIGINS list (undefined: none), as the CORS
   * plugin computes it; undefined under `*`, whose headers are the same for every request and replayed.
   */
  allowOrigin: ((origin: string | undefined) => string | undefined) | undefined;
  /** The request log: each hot answer is logged as the pipeline logs it. */
  log: RequestLog;
  /** The per-caller limit, counted in the same store as @fastify/rate-limit; undefined when off. */
  limiter: CallerLimiter | undefined;
  /** The request metrics, which the pipeline's onResponse hook feeds too. */
  record: RequestRecorder;
  /** The cache's lookup counters: a hot answer is a cache hit and is counted as one. */
  cacheCounters: { hit: number };
  /** CLIENT_KEYS is set: a request that may carry a key is the pipeline's to identify. */
  keyed: boolean;
}

export class HotPath {
  private readonly entries = new LRUCache<string, HotEntry>({
    max: 2_000,
    maxSize: 32 * 1024 * 1024,
    sizeCalculation: (e) => e.bytes + 512,
  });
  private enabled = true;
  private readonly callerAddress: (req: IncomingMessage) => string | undefined;
  private readonly allowOrigin: ((origin: string | undefined) => string | undefined) | undefined;
  private readonly log: RequestLog;
  private readonly limiter: CallerLimiter | undefined;
  private readonly record: RequestRecorder;
  private readonly cacheCounters: { hit: number };
  private readonly keyed: boolean;
  /** Requests answered here rather than by Fastify. */
  served = 0;

  constructor(options: HotPathOptions) {
    // Compiled once: per request it is proxy-addr's walk over X-Forwarded-For alone.
    this.callerAddress = callerAddress(options.trustProxy);
    this.allowOrigin = options.allowOrigin;
    this.log = options.log;
    this.limiter = options.limiter;
    this.record = options.record;
    this.cacheCounters = options.cacheCounters;
    this.keyed = options.keyed;
  }

  /** Called by sendCached once the pipeline has rendered a fresh 200 for this URL. */
  remember(request: FastifyRequest, reply: FastifyReply, entry: CacheEntry, body: string, etag: string, onAnswer?: HotAnswerHook): void {
    if (!this.enabled || request.method !== 'GET' || reply.statusCode !== 200 || reply.hasHeader('x-partial')) return;
    // A keyed caller's answer carries its own rate limit; the hot path answers anonymous callers only.
    if (request.caller?.key !== undefined) return;
    // A shared cache never stores one caller's answer (RFC 9111 §3.5): broker data is answered by the pipeline, with its access rule, every time.
    if (!String(reply.getHeader('cache-control')).startsWith('public')) return;
    // Nor an answer that varies on more than the Origin it recomputes, or under a route's own CORS rule rather than the market policy.
    const vary = reply.getHeader('vary');
    if ((vary !== undefined && (this.allowOrigin === undefined || vary !== 'Origin')) || request.routeOptions.config.cors !== undefined)
      return;
    const replayed: string[] = [];
    let originAt: number | undefined;
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (this.allowOrigin !== undefined && (name === 'access-control-allow-origin' || name === 'access-control-expose-headers')) {
        // @fastify/cors sets Allow-Origin (when the Origin is allowed) just before the exposed headers (always).
        originAt ??= replayed.length;
        if (name === 'access-control-allow-origin') continue;
      }
      if (!PER_REQUEST.has(name) && name !== 'content-type' && value !== undefined) replayed.push(name, String(value));
    }
    if (this.allowOrigin !== undefined && originAt === undefined) return;
    // A 304 carries no Content-Type (nor a body to measure).
    const contentType = reply.getHeader('content-type');
    const bytes = Buffer.byteLength(body);
    const ok = [...(contentType === undefined ? [] : ['content-type', String(contentType)]), 'content-length', String(bytes)];
    const limited = this.limiter !== undefined && limitedRoute(request.routeOptions.url);
    const heads = (origin?: number): Heads => ({
      ok: new ReplayedHead(replayed, limited, ok, origin),
      notModified: new ReplayedHead(replayed, limited, [], origin),
    });
    this.entries.set(request.url, {
      entry,
      route: request.routeOptions.url ?? request.url,
      body,
      bytes,
      etag,
      limited,
      loggedUrl: redactUrl(request.url),
      lines: [],
      ageSeconds: -1,
      age: '',
      plain: heads(),
      allowed: originAt === undefined ? undefined : heads(originAt),
      onAnswer,
    });
  }

  /** Stops answering (shutdown: the pipeline then answers 503 SHUTTING_DOWN as it closes). */
  disable(): void {
    this.enabled = false;
    this.entries.clear();
  }

  /** The server's request listener: the hot path when it can answer exactly, else Fastify. */
  listener(fastify: Handler): Handler {
    return (req, res) => {
      const now = Date.now();
      const hot = this.enabled && !(this.keyed && req.headers.authorization !== undefined) ? this.lookup(req, now) : undefined;
      if (hot === undefined) return fastify(req, res);
      const started = performance.now();
      const limiter = hot.limited ? this.limiter : undefined;
      // The caller's address keys the limit and the log line; with neither, proxy-addr's walk is skipped.
      const address = limiter !== undefined || this.log.enabled ? this.callerAddress(req) : undefined;
      if (limiter === undefined) return this.answer(req, res, hot, now, started, address, undefined);
      limiter.incr(
        addressCaller(address).account,
        (error, count) => {
          // Over the limit, or the store failed: the pipeline renders the 429 (or its own fallback).
          if (error !== null || count === undefined || count.current > limiter.max) return fastify(req, res);
          this.answer(req, res, hot, now, started, address, { remaining: limiter.max - count.current, reset: Math.ceil(count.ttl / 1000) });
        },
        limiter.windowMs,
      );
    };
  }

  private lookup(req: IncomingMessage, now: number): HotEntry | undefined {
    if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
    if (req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0') return undefined;
    if (lacksHost(req)) return undefined;
    const hot = this.entries.get(req.url ?? '');
    if (hot === undefined) return undefined;
    if (now >= hot.entry.freshUntil) {
      this.entries.delete(req.url ?? '');
      return undefined;
    }
    return hot;
  }

  private answer(
    req: IncomingMessage,
    res: ServerResponse,
    hot: HotEntry,
    now: number,
    started: number,
    address: string | undefined,
    limit: LimitValues,
  ): void {
    this.served += 1;
    this.cacheCounters.hit += 1;
    const id = requestId(req.headers['x-request-id']);
    const ageSeconds = Math.max(0, Math.floor((now - hot.entry.storedAt) / 1000));
    if (ageSeconds !== hot.ageSeconds) {
      hot.ageSeconds = ageSeconds;
      hot.age = String(ageSeconds);
    }
    const notModified = matchesEtag(req.headers['if-none-match'], hot.etag);
    const status = notModified ? 304 : 200;
    const origin = this.allowOrigin?.(req.headers.origin);
    const heads = origin === undefined ? hot.plain : (hot.allowed ?? hot.plain);
    res.writeHead(status, (notModified ? heads.notModified : heads.ok).fill(id, hot.age, limit, origin));
    res.end(notModified || req.method === 'HEAD' ? undefined : hot.body);
    hot.onAnswer?.(hot.entry, () => addressCaller(address ?? this.callerAddress(req)));
    const seconds = (performance.now() - started) / 1000;
    this.record(req.method ?? 'GET', hot.route, status, seconds, 'HIT');
    if (this.log.enabled) {
      const ms = Math.round(seconds * 1000);
      if (ms !== 0) this.log.write({ reqId: id, method: req.method, url: hot.loggedUrl, status, ms, cache: 'HIT', ip: address });
      else {
        // A hit takes microseconds: its line is one of four per URL (GET or HEAD, 200 or 304) but for id and ip.
        const at = (req.method === 'HEAD' ? 2 : 0) + (notModified ? 1 : 0);
        hot.lines[at] ??= new SharedFields({ method: req.method, url: hot.loggedUrl, status, ms, cache: 'HIT' });
        this.log.writeShared(id, hot.lines[at], address);
      }
    }
  }
}
