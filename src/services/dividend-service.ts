// Provider B's (Massive) dividends, a page at a time through the cache. A page's `next` is a path on this
// service whose cursor is opaque and bound to the symbol and limit of the page it continues.
import type { CacheResult, CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import { type Configured, use } from '../core/configured.js';
import { ApiError } from '../core/errors.js';
import { MASSIVE } from '../core/upstream-ids.js';
import type { CursorCodec, CursorState } from '../upstreams/massive/dividend-cursor.js';
import type { MassiveClient } from '../upstreams/massive/massive-client.js';
import type { DividendRecord } from '../upstreams/massive/parse-dividends.js';
import { massiveKeys } from './cache-keys.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** What the caller asked for: a first page (symbol, limit) or the one a cursor continues to. */
export interface DividendsQuery {
  symbol?: string;
  limit?: number;
  cursor?: string;
}

export interface DividendsAnswer {
  results: DividendRecord[];
  count: number;
  /** Path of the following page on this service, or null on the last page. */
  next: string | null;
}

export interface DividendServiceOptions {
  cache: UpstreamCache;
  window: CacheWindow;
  /** Provider B's state scope. */
  scope: string;
  massive: Configured<MassiveClient>;
  cursors: CursorCodec;
}

export class DividendService {
  constructor(private readonly options: DividendServiceOptions) {}

  /** The page `query` names; `path` is the route's own, which `next` links to. */
  async page(query: DividendsQuery, path: string): Promise<CacheResult<DividendsAnswer>> {
    const { cache, window, scope, cursors } = this.options;
    // A bad cursor is the caller's mistake: refused before the provider is even looked at.
    const page = this.resolve(query);
    const massive = use(this.options.massive);
    const load = async (): Promise<DividendsAnswer> => {
      const upstream = await massive.dividends({ ticker: page.symbol ?? undefined, limit: page.limit, cursor: page.cursor ?? undefined });
      const next =
        upstream.nextCursor === null
          ? null
          : nextLink(path, { symbol: page.symbol, limit: page.limit, upstream: upstream.nextCursor }, cursors);
      return { results: upstream.results, count: upstream.results.length, next };
    };
    return cache.fetch(massiveKeys.dividends(scope, page.symbol, page.limit, page.cursor), window, load, { upstream: MASSIVE });
  }

  /** The page to read: from the query alone, or from a cursor that must agree with it. */
  private resolve(query: DividendsQuery): { symbol: string | null; limit: number; cursor: string | null } {
    const symbol = query.symbol === undefined ? null : query.symbol.toUpperCase();
    if (query.cursor === undefined) return { symbol, limit: query.limit ?? DEFAULT_LIMIT, cursor: null };
    const state = this.options.cursors.decode(query.cursor);
    if (query.symbol !== undefined && symbol !== state.symbol) {
      throw new ApiError('INVALID_PARAMETER', 'cursor belongs to a different symbol: use the "next" link as given');
    }
    if (query.limit !== undefined && query.limit !== state.limit) {
      throw new ApiError('INVALID_PARAMETER', 'cursor belongs to a different limit: use the "next" link as given');
    }
    return { symbol: state.symbol, limit: state.limit, cursor: state.upstream };
  }
}

function nextLink(path: string, state: CursorState, cursors: CursorCodec): string {
  const params = new URLSearchParams();
  if (state.symbol !== null) params.set('symbol', state.symbol);
  params.set('limit', String(state.limit));
  params.set('cursor', cursors.encode(state));
  return `${path}?${params.toString()}`;
}
