// The aggregated overview: every configured instrument, fetched with a concurrency cap, each cached under
// its own key, and the whole answer cached as one value, so a warm overview costs no upstream work and
// concurrent cold requests share one build (the cache's single flight).
//
// Instruments are read with stale-if-error, not stale-while-revalidate: the aggregate is rebuilt only
// when it is no longer fresh, and by then its instruments are no longer fresh either, so serving them
// stale would pin the overview one window behind. A stale instrument is used only when its refresh fails.
import type { Logger } from 'pino';
import type { CacheResult, CacheWindow } from '../cache/cache-store.js';
import { isFresh, isServable, makeEntry } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import { ApiError } from '../core/errors.js';
import type { AreaId } from '../core/upstream-ids.js';
import type { OverviewSource } from '../upstreams/overview-source.js';
import type { UpstreamHealth } from '../health/upstream-health.js';
import { yahooKeys } from './cache-keys.js';
import { mapLimit } from './concurrency-limit.js';
import { formatEntry, type OverviewEntry } from './overview-entry.js';

export interface OverviewValue {
  /** Keyed by symbol, in the configured order. */
  quotes: Record<string, OverviewEntry>;
  /** Symbols that could be served neither fresh nor stale (the `X-Partial` header). */
  missing: string[];
}

export interface MarketOverviewOptions {
  source: OverviewSource;
  /** The source's key prefix (src/store/upstream-identity.ts). */
  scope: string;
  symbols: readonly string[];
  concurrency: number;
  window: CacheWindow;
  cache: UpstreamCache;
  health: UpstreamHealth;
  logger: Logger;
}

type Outcome = { ok: true; entry: OverviewEntry } | { ok: false; error: unknown };

/** The aggregate is tracked under its area's name in health and status, beside the per-instrument calls. */
const OVERVIEW_UPSTREAM: AreaId = 'overview';

export class MarketOverview {
  private readonly key: string;
  private readonly symbols: string[];

  constructor(private readonly options: MarketOverviewOptions) {
    this.symbols = [...new Set(options.symbols.map((s) => s.toUpperCase()))];
    this.key = yahooKeys.overview(options.scope, this.symbols);
  }

  /** `revalidate`: a stream's poller waits for the refresh of a stale overview (see FetchOptions). */
  get(options: { revalidate?: boolean } = {}): Promise<CacheResult<OverviewValue>> {
    return this.options.cache.fetch(this.key, this.options.window, () => this.collect(), {
      upstream: OVERVIEW_UPSTREAM,
      breaker: false,
      ...options,
    });
  }

  instrumentKey(symbol: string): string {
    return yahooKeys.instrument(this.options.scope, symbol);
  }

  /** Reads every instrument now (fresh from its own cache, else from the source, else stale), bypassing the aggregate. */
  async collect(): Promise<OverviewValue> {
    const { symbols } = this;
    const outcomes = await mapLimit(symbols, this.options.concurrency, (symbol) => this.instrument(symbol));
    const quotes: Record<string, OverviewEntry> = {};
    const missing: string[] = [];
    const errors: unknown[] = [];
    outcomes.forEach((outcome, i) => {
      const symbol = symbols[i] as string;
      if (outcome.ok) quotes[symbol] = outcome.entry;
      else {
        missing.push(symbol);
        errors.push(outcome.error);
      }
    });
    if (missing.length === symbols.length) throw nothingToServe(errors);
    if (missing.length > 0) this.options.logger.warn({ missing }, 'market overview is partial');
    return { quotes, missing };
  }

  private async instrument(symbol: string): Promise<Outcome> {
    const { cache, health, source, window } = this.options;
    const key = this.instrumentKey(symbol);
    const cached = await cache.store.get<OverviewEntry>(key);
    if (cached !== undefined && isFresh(cached, Date.now())) return { ok: true, entry: cached.value };
    try {
      const entry = formatEntry(await health.track(source.name, () => source.fetchInstrument(symbol)));
      await cache.store.set(key, makeEntry(entry, window));
      return { ok: true, entry };
    } catch (error) {
      if (cached !== undefined && isServable(cached, Date.now())) {
        this.options.logger.info({ symbol, code: (error as { code?: string }).code }, 'overview instrument served stale');
        return { ok: true, entry: cached.value };
      }
      return { ok: false, error };
    }
  }
}

/** Every instrument failed and none was cached: one error that says why, never cached. */
function nothingToServe(errors: unknown[]): ApiError {
  const apiErrors = errors.filter((e): e is ApiError => e instanceof ApiError);
  const first = apiErrors[0];
  const retryAfters = apiErrors.map((e) => e.retryAfterSeconds).filter((s): s is number => s !== undefined);
  const said = (reason: string) => `no instrument of the market overview could be fetched (${reason})`;
  // Refused before any call for everyone's budget or this caller's share: the caller hears that (a 429), not a failure.
  const refusal = apiErrors.length === errors.length && apiErrors.every((e) => e.code === first?.code) ? first?.code : undefined;
  const code = refusal === 'QUOTA_EXHAUSTED' || refusal === 'CALLER_SHARE_SPENT' ? refusal : 'UPSTREAM_ERROR';
  return new ApiError(code, said(first?.message ?? 'unexpected failure'), {
    retryAfterSeconds: retryAfters.length === apiErrors.length && retryAfters.length > 0 ? Math.min(...retryAfters) : undefined,
    publicMessage: said(first?.publicMessage ?? 'unexpected failure'),
  });
}
