// SYMBOL_SEARCH from provider A through the cache (a day fresh by default): for /search and /query.
import type { CacheResult, CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import { ApiError } from '../core/errors.js';
import { ALPHA_VANTAGE } from '../core/upstream-ids.js';
import type { AlphaVantageClient } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { type Configured, use } from '../core/configured.js';
import type { SymbolSearchBody } from '../wire/alpha-vantage/bodies.js';
import { alphaVantageKeys } from './cache-keys.js';

export interface SearchServiceOptions {
  cache: UpstreamCache;
  window: CacheWindow;
  /** Provider A's state scope. */
  scope: string;
  alphaVantage: Configured<AlphaVantageClient>;
}

export class SearchService {
  constructor(private readonly options: SearchServiceOptions) {}

  get(keywords: string): Promise<CacheResult<SymbolSearchBody>> {
    const { cache, window, scope, alphaVantage } = this.options;
    const text = keywords.trim();
    // Blank keywords are no search (Alpha Vantage answers them as an invalid call): a 400, no call.
    if (text === '') throw new ApiError('MISSING_PARAMETER', 'keywords must not be blank');
    return cache.fetch(alphaVantageKeys.search(scope, text), window, () => use(alphaVantage).symbolSearch(text), {
      upstream: ALPHA_VANTAGE,
    });
  }
}
