// The broker's data through the cache, private to the caller: accounts, positions, and quotes from the
// real-time feed where it can answer a request whole (X-Data-Source: broker-stream), else a snapshot cached
// under the sorted distinct list, so concurrent identical requests cost one broker call
// (X-Data-Source: broker-snapshot); a snapshot completes the feed's quotes that lack fields. The health
// check is live but memoised (broker-health-memo.ts).
import type { Broker, BrokerAccount, BrokerHealth, BrokerPosition, BrokerQuotes } from '../broker/broker.js';
import type { BrokerKind } from '../core/config.js';
import { type Configured, use } from '../core/configured.js';
import { within } from '../core/within.js';
import { type CacheEntry, type CacheResult, type CacheStatus, type CacheWindow, makeEntry } from '../cache/cache-store.js';
import type { FetchOptions, UpstreamCache } from '../cache/upstream-cache.js';
import type { UpstreamHealth } from '../health/upstream-health.js';
import { HealthMemo } from './broker-health-memo.js';
import { brokerKeys } from './cache-keys.js';

const STREAM_SOURCE = 'broker-stream';
const SNAPSHOT_SOURCE = 'broker-snapshot';
type BrokerQuoteSource = typeof STREAM_SOURCE | typeof SNAPSHOT_SOURCE;

/** The broker's real-time feed as the quotes read it (stream/shared-quote-stream.ts). */
interface BrokerQuoteFeed {
  /** The symbols are wanted now: subscribe them, and keep them so for a while. */
  touch(symbols: readonly string[]): void;
  /** The whole answer from the feed, or undefined while it lacks a field of a symbol asked for. */
  answer(symbols: readonly string[]): { body: BrokerQuotes; newestTickAt: number } | undefined;
  /** A snapshot's quotes, to complete the feed's. */
  learn(body: BrokerQuotes, at: number): void;
}

export interface BrokerServiceOptions {
  cache: UpstreamCache;
  broker: Configured<Broker>;
  kind: BrokerKind;
  /** The broker's state scope. */
  scope: string;
  windows: { accounts: CacheWindow; positions: CacheWindow; quotes: CacheWindow };
  /** Undefined when BROKER_STREAMING=off or the broker has no feed. */
  feed: BrokerQuoteFeed | undefined;
  health: UpstreamHealth;
}

export class BrokerService {
  private readonly memo: HealthMemo;

  constructor(private readonly options: BrokerServiceOptions) {
    this.memo = new HealthMemo(options.kind, options.broker, options.health);
  }

  health(): Promise<{ entry: CacheEntry<BrokerHealth>; status: CacheStatus }> {
    return this.memo.get();
  }

  /**
   * The session as last checked, and a new check when that is older than `maxAgeMs`, awaited for `waitMs` at
   * most (else the last result stands): the metrics see a lost session within a scrape or two even while
   * nobody asks the broker for anything, and a slow broker never slows a scrape. Undefined before any check.
   */
  async recentHealth(maxAgeMs: number, waitMs: number): Promise<BrokerHealth | undefined> {
    const last = this.memo.last;
    if (last !== undefined && Date.now() - last.storedAt < maxAgeMs) return last.value;
    return within(
      this.memo.get().then(({ entry }) => entry.value),
      last?.value,
      waitMs,
    );
  }

  accounts(): Promise<CacheResult<{ accounts: BrokerAccount[] }>> {
    const { scope, windows } = this.options;
    return this.load(brokerKeys.accounts(scope), windows.accounts, async (broker) => ({ accounts: await broker.accounts() }));
  }

  positions(): Promise<CacheResult<{ positions: BrokerPosition[] }>> {
    const { scope, windows } = this.options;
    return this.load(brokerKeys.positions(scope), windows.positions, async (broker) => ({ positions: await broker.positions() }));
  }

  /** `symbols` sorted and distinct (parseSymbolList): from the feed when it answers them whole, else a snapshot. */
  async quotes(symbols: string[]): Promise<{ result: CacheResult<BrokerQuotes>; source: BrokerQuoteSource }> {
    use(this.options.broker);
    const { feed } = this.options;
    feed?.touch(symbols);
    const answer = feed?.answer(symbols);
    if (answer === undefined) return { result: await this.snapshot(symbols), source: SNAPSHOT_SOURCE };
    // Age counts from the newest tick.
    const entry = makeEntry<BrokerQuotes>(answer.body, this.options.windows.quotes, answer.newestTickAt || Date.now());
    return { result: { entry, status: 'HIT' }, source: STREAM_SOURCE };
  }

  /** A snapshot of `symbols` (sorted and distinct), which completes the feed's quotes too; the stream topic reads it. */
  async snapshot(symbols: string[], options: Pick<FetchOptions, 'revalidate'> = {}): Promise<CacheResult<BrokerQuotes>> {
    const { scope, windows, feed } = this.options;
    const result = await this.load(brokerKeys.quotes(scope, symbols), windows.quotes, (broker) => broker.quotes(symbols), options);
    feed?.learn(result.entry.value, result.entry.storedAt);
    return result;
  }

  /** Raises PROVIDER_NOT_CONFIGURED before the cache, so an absent broker never shows up as a failing upstream. */
  private load<T>(
    key: string,
    window: CacheWindow,
    load: (broker: Broker) => Promise<T>,
    options: Partial<FetchOptions> = {},
  ): Promise<CacheResult<T>> {
    const { cache, kind } = this.options;
    const broker = use(this.options.broker);
    return cache.fetch(key, window, () => load(broker), { upstream: kind, ...options });
  }
}
