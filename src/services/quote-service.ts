// Quotes from provider A, with Yahoo as the fallback when provider A cannot answer: its budget would be
// exceeded, it sent a limit body, it failed or timed out, its circuit is open, or it is not configured
// (live mode). The Yahoo quote is read from the symbol's stored daily series (series-quotes.ts), the one
// its computed indicators read. Both sources go through the same cache (single flight, stale values,
// circuit breakers, back-off), each under its own keys and scope, so they never mix in the cache.
//
// Which value is served: a fresh provider-A value always; else a fresh Yahoo value newer than any
// provider-A value; else a new value, asked from provider A first when the key is among the hottest (see
// budget-planner.ts) and from Yahoo first otherwise; else the newest stale value of either. A stale
// provider-A value does not hide a fresh Yahoo one (a dashboard wants the newer price, and the header says
// where it came from); a Yahoo value never hides a provider-A value at least as new, so a later provider-A
// answer replaces a fallback answer and never the reverse. Both unable and nothing cached: provider A's
// error (429 QUOTA_EXHAUSTED with Retry-After when the budget is spent), as without a fallback.
import type { BudgetLimits } from '../budget/budget-guard.js';
import { type CacheEntry, type CacheResult, type CacheStatus, type CacheWindow, isFresh, isServable } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import type { AlphaVantageEntitlement } from '../core/config.js';
import { type Caller, runAs } from '../core/caller.js';
import { ApiError, type ErrorCode } from '../core/errors.js';
import { type Freshness, instant } from '../core/freshness.js';
import type { AlphaVantageClient } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { quoteFreshness } from '../upstreams/alpha-vantage/entitlement.js';
import { type Configured, use } from '../core/configured.js';
import type { GlobalQuoteBody } from '../wire/alpha-vantage/bodies.js';
import { ALPHA_VANTAGE } from '../core/upstream-ids.js';
import { BudgetPlanner } from './budget-planner.js';
import { alphaVantageKeys } from './cache-keys.js';
import { type DataSource, FALLBACK, PRIMARY, type SourceTally } from './data-source.js';
import type { SeriesQuotes } from './series-quotes.js';

export interface SourcedResult<T> {
  /** The cached answer, and how fresh its values are (the X-Data-Freshness header of an Alpha Vantage-shaped body). */
  result: CacheResult<T> & { freshness?: Freshness };
  source: DataSource;
  /**
   * Told each time the hot path answers this result by itself, in place of a call to the service; `caller` is who
   * asked, whose account an early refresh it starts is put to.
   */
  onHotAnswer?: (entry: CacheEntry, caller: () => Caller) => void;
}

export interface QuoteServiceOptions {
  cache: UpstreamCache;
  window: CacheWindow;
  /** Key prefix of provider A's stored quotes (its state scope). */
  scope: string;
  alphaVantage: Configured<AlphaVantageClient>;
  /** ALPHA_VANTAGE_ENTITLEMENT: how fresh provider A's quotes are (entitlement.ts). */
  entitlement?: AlphaVantageEntitlement;
  /** Provider A's budget, which the planner sizes the hot set from. */
  limits: BudgetLimits;
  /** Undefined when QUOTE_FALLBACK is `none`. */
  fallback: SeriesQuotes | undefined;
  tally: SourceTally;
}

/** Provider A could not answer for a reason the fallback can cover (not the caller's or the symbol's fault). */
const FALLBACK_CODES: ReadonlySet<ErrorCode> = new Set([
  'QUOTA_EXHAUSTED',
  'CALLER_SHARE_SPENT',
  'UPSTREAM_ERROR',
  'UPSTREAM_TIMEOUT',
  'PROVIDER_NOT_CONFIGURED',
]);

/** Whether provider A's `error` is one the fallback answers for (quotes and technical indicators alike). */
export function mayFallBack(error: unknown): boolean {
  return error instanceof ApiError && FALLBACK_CODES.has(error.code);
}

interface Source {
  source: DataSource;
  /** The stored value, however old, without loading. */
  peek: () => Promise<CacheEntry<GlobalQuoteBody> | undefined>;
  /** A new value now (single flight). */
  load: () => Promise<CacheEntry<GlobalQuoteBody>>;
}

export class QuoteService {
  readonly planner: BudgetPlanner;

  constructor(private readonly options: QuoteServiceOptions) {
    this.planner = new BudgetPlanner(options.limits, options.window.freshMs);
  }

  /** The quote for `symbol` (upper case), and where it came from; the hot path's answers count as demand for it. */
  async get(symbol: string, options: { revalidate?: boolean } = {}): Promise<SourcedResult<GlobalQuoteBody>> {
    return { ...(await this.read(symbol, options)), onHotAnswer: (entry, caller) => this.servedHot(symbol, entry, caller) };
  }

  private async read(symbol: string, options: { revalidate?: boolean }): Promise<SourcedResult<GlobalQuoteBody>> {
    this.planner.note(symbol);
    const primary = this.primary(symbol);
    const cached = await primary.peek();
    const now = Date.now();
    if (cached !== undefined && isFresh(cached, now)) return this.answer(this.refreshed(symbol, cached), 'HIT', PRIMARY);
    const fallback = this.fallback(symbol);
    if (fallback === undefined) return this.primaryOnly(symbol, cached, options.revalidate === true);

    const other = await fallback.peek();
    if (other !== undefined && isFresh(other, now) && (cached === undefined || other.storedAt > cached.storedAt)) {
      this.refreshed(symbol, cached);
      return this.answer(other, 'HIT', FALLBACK);
    }
    const order = this.planner.isHot(symbol) ? [primary, fallback] : [fallback, primary];
    const errors = new Map<DataSource, unknown>();
    for (const source of order) {
      try {
        return this.answer(await source.load(), 'MISS', source.source);
      } catch (error) {
        if (source.source === PRIMARY && !mayFallBack(error)) throw error;
        errors.set(source.source, error);
      }
    }
    const newest = [
      { entry: cached, source: PRIMARY },
      { entry: other, source: FALLBACK },
    ]
      .filter((c): c is { entry: CacheEntry<GlobalQuoteBody>; source: DataSource } => c.entry !== undefined && isServable(c.entry, now))
      .sort((a, b) => b.entry.storedAt - a.entry.storedAt)[0];
    if (newest !== undefined) return this.answer(newest.entry, 'STALE', newest.source);
    this.planner.noteRefusal(symbol);
    throw errors.get(PRIMARY) ?? errors.get(FALLBACK);
  }

  /** Called when the hot path answers a fresh provider-A value by itself: demand, and the early refresh. */
  private servedHot(symbol: string, entry: CacheEntry, caller: () => Caller): void {
    this.planner.note(symbol);
    // The hot path answers outside any request's context: an early refresh it starts is the asking caller's.
    if (this.due(symbol, entry as CacheEntry<GlobalQuoteBody>))
      runAs([caller()], () => this.refreshed(symbol, entry as CacheEntry<GlobalQuoteBody>));
    this.options.tally.count('quote', PRIMARY);
  }

  /** Without a fallback: provider A's value as today, with the planner choosing which keys to refresh. */
  private async primaryOnly(
    symbol: string,
    cached: CacheEntry<GlobalQuoteBody> | undefined,
    revalidate: boolean,
  ): Promise<SourcedResult<GlobalQuoteBody>> {
    const servable = cached !== undefined && isServable(cached, Date.now());
    if (servable && !(revalidate && this.planner.isHot(symbol))) return this.answer(this.refreshed(symbol, cached), 'STALE', PRIMARY);
    if (!servable && !this.planner.mayLoad(symbol)) {
      this.planner.noteRefusal(symbol);
      throw new ApiError('QUOTA_EXHAUSTED', "provider A's calls are kept for symbols more in demand; try again later", {
        retryAfterSeconds: this.planner.minuteMs / 1000,
      });
    }
    try {
      const entry = await this.primary(symbol).load();
      this.planner.noteLoaded(symbol);
      return this.answer(entry, 'MISS', PRIMARY);
    } catch (error) {
      // A poller revalidating keeps the stale value when the refresh fails, as a request would.
      if (servable) return this.answer(cached, 'STALE', PRIMARY);
      if (error instanceof ApiError && error.code === 'QUOTA_EXHAUSTED') this.planner.noteRefusal(symbol);
      throw error;
    }
  }

  /** Starts a background provider-A refresh when the planner spends a call on this key now. */
  private refreshed<T extends CacheEntry<GlobalQuoteBody> | undefined>(symbol: string, cached: T): T {
    if (this.due(symbol, cached)) {
      const { cache, window, alphaVantage } = this.options;
      cache.refresh(this.primaryKey(symbol), window, () => use(alphaVantage).globalQuote(symbol), { upstream: ALPHA_VANTAGE });
    }
    return cached;
  }

  /** Whether the planner spends a provider-A call on refreshing this key now. */
  private due(symbol: string, cached: CacheEntry<GlobalQuoteBody> | undefined): boolean {
    const due = cached === undefined ? this.planner.isHot(symbol) : this.planner.mayRefresh(symbol, cached);
    return due && this.options.alphaVantage.configured;
  }

  private answer(entry: CacheEntry<GlobalQuoteBody>, status: CacheStatus, source: DataSource): SourcedResult<GlobalQuoteBody> {
    this.options.cache.count(status);
    this.options.tally.count('quote', source);
    return { result: { entry, status, freshness: this.freshness(entry, source) }, source };
  }

  /** As of when the value came: provider A's by its plan and the quote's day, Yahoo's by the chart it was read from. */
  private freshness(entry: CacheEntry<GlobalQuoteBody>, source: DataSource): Freshness {
    if (source === PRIMARY) return quoteFreshness(entry.value, this.options.entitlement, entry.storedAt);
    return this.options.fallback?.freshnessOf(entry) ?? { kind: 'unknown', asOf: instant(entry.storedAt) };
  }

  private primaryKey(symbol: string): string {
    return alphaVantageKeys.quote(this.options.scope, symbol);
  }

  private primary(symbol: string): Source {
    const { cache, window, alphaVantage } = this.options;
    const key = this.primaryKey(symbol);
    return {
      source: PRIMARY,
      peek: () => cache.peek<GlobalQuoteBody>(key),
      load: () => cache.load(key, window, () => use(alphaVantage).globalQuote(symbol), { upstream: ALPHA_VANTAGE }),
    };
  }

  /** Yahoo's quote from the stored daily series; undefined without the fallback or a sure Yahoo symbol. */
  private fallback(symbol: string): Source | undefined {
    const quotes = this.options.fallback;
    if (quotes === undefined || !quotes.covers(symbol)) return undefined;
    return { source: FALLBACK, peek: () => quotes.peek(symbol), load: () => quotes.load(symbol) };
  }
}
