// Renders a cache result: X-Cache, Age, Cache-Control, ETag and a 304 when the caller already has it, and
// X-Data-Freshness when the result says how fresh its body is (Alpha Vantage-shaped bodies, which must stay
// the provider's byte for byte, carry it there). The body and its ETag are computed once per cache entry,
// so a hit costs a map lookup and a write.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CacheEntry, CacheResult } from '../../cache/cache-store.js';
import { FRESHNESS_HEADER, type Freshness, freshnessHeader } from '../../core/freshness.js';
import { PRIMARY } from '../../services/data-source.js';
import type { HotAnswerHook } from './hot-path.js';

interface Rendered {
  body: string;
  etag: string;
}

const rendered = new WeakMap<CacheEntry, Rendered>();

/** A string value is sent as it is (a CSV answer); anything else as JSON. */
function render(entry: CacheEntry): Rendered {
  let out = rendered.get(entry);
  if (out === undefined) {
    const body = typeof entry.value === 'string' ? entry.value : JSON.stringify(entry.value);
    out = { body, etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 27)}"` };
    rendered.set(entry, out);
  }
  return out;
}

export interface SendOptions {
  /** false: never answered by the hot path (default true for fresh public answers). */
  hot?: boolean;
  /**
   * `private`: one caller's data (broker accounts, positions, quotes): the caller's browser may keep it, no
   * shared cache may (RFC 9111 §5.2.2.7), the hot path included. Default `public`.
   */
  visibility?: 'public' | 'private';
  /** Told each time the hot path answers this entry by itself (it skips the route). */
  onHotAnswer?: HotAnswerHook;
  /** `csv`: the entry holds CSV text, sent as text/csv (Alpha Vantage's datatype=csv). Default json. */
  format?: 'json' | 'csv';
}

/** `freshness`: a function of the entry (when it came, and the configuration), so the hot path may replay it with the entry. */
export function sendCached(
  request: FastifyRequest,
  reply: FastifyReply,
  result: CacheResult<unknown> & { freshness?: Freshness },
  options: SendOptions = {},
): FastifyReply {
  const { entry, status, freshness } = result;
  const now = Date.now();
  const { body, etag } = render(entry);
  const visibility = options.visibility ?? 'public';
  if (freshness !== undefined) reply.header(FRESHNESS_HEADER, freshnessHeader(freshness));
  reply.headers({
    'x-cache': status,
    age: String(Math.max(0, Math.floor((now - entry.storedAt) / 1000))),
    'cache-control': cacheControl(entry, visibility),
    etag,
  });
  if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).send();
  reply.type(options.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
  if (status !== 'STALE' && options.hot !== false && visibility === 'public')
    request.server.hotPath.remember(request, reply, entry, body, etag, options.onHotAnswer);
  return reply.send(body);
}

/**
 * Sends a result a service read from one of several sources, saying which (X-Data-Source). The hot path
 * replays provider-A answers only: a fallback answer must give way to provider A's next one.
 */
export function sendSourced(
  request: FastifyRequest,
  reply: FastifyReply,
  {
    result,
    source,
    onHotAnswer,
  }: { result: CacheResult<unknown> & { freshness?: Freshness }; source: string; onHotAnswer?: HotAnswerHook },
  options: SendOptions = {},
): FastifyReply {
  reply.header('x-data-source', source);
  return sendCached(request, reply, result, source === PRIMARY ? { onHotAnswer, ...options } : { ...options, hot: false });
}

/**
 * RFC 9111: a cache subtracts `Age` from `max-age`, so `max-age` is the whole fresh window (a stale entry is
 * one whose Age exceeds it). Both stale directives count from the end of the fresh window: the stale window
 * is how long this service itself would still serve the entry, in the background of a refresh or when the
 * upstream fails.
 */
function cacheControl(entry: CacheEntry, visibility: 'public' | 'private' = 'public'): string {
  const maxAge = Math.max(0, Math.floor((entry.freshUntil - entry.storedAt) / 1000));
  const stale = Math.max(0, Math.floor((entry.staleUntil - entry.freshUntil) / 1000));
  return `${visibility}, max-age=${maxAge}, stale-while-revalidate=${stale}, stale-if-error=${stale}`;
}

export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header === etag) return true;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
