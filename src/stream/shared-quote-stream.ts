// One broker quote stream for the whole deployment. With Redis, the replica holding a lease (renewed every
// second, taken over by another replica within the lease time when its holder dies) opens the broker's
// feed and subscribes the symbols every replica needs (each replica keeps its needs, with an expiry, in a
// shared sorted set, and announces a new one on the relay channel at once); it publishes every quote
// update and, every second, the feed's status on that channel. The others relay the updates to their own
// viewers. With the embedded store the process holds the feed itself.
//
// A quote is served from the stream while the feed is connected (for a replica without the feed: while
// the holder's status keeps arriving) and the symbol's stream quote is complete, or was completed by a
// snapshot (quote-completion.ts). Otherwise callers take a snapshot, whose answer completes the stream's
// quotes and says which symbols the broker does not know.
import type { Logger } from 'pino';
import type { BrokerQuote, BrokerQuotes } from '../broker/broker.js';
import { completeQuote } from '../broker/quote-completion.js';
import type { BrokerQuoteStream, QuoteStreamStatus, StreamedQuote } from '../broker/quote-stream.js';
import type { BrokerKind } from '../core/config.js';
import { QuoteDemand } from './quote-demand.js';
import type { RelayChannel, TopicRelay } from './topic-relay.js';

export type StreamRole = 'local' | 'holder' | 'relayed';

export interface SharedStreamStatus extends QuoteStreamStatus {
  /** local: this process holds the feed (embedded store); holder: this replica holds it for all; relayed: another does. */
  role: StreamRole;
  /** Quotes are answered from the stream now. */
  available: boolean;
}

export interface SharedQuoteStreamOptions {
  broker: BrokerKind;
  /** The broker's feed, created by the replica that holds it. */
  create: () => BrokerQuoteStream;
  /** Absent with the embedded store: the process holds the feed. */
  relay?: TopicRelay;
  /** The stored-state scope of the broker (data mode and upstream identity): replicas of one broker share one feed. */
  scope: string;
  logger: Logger;
  /** How long a symbol asked for over REST stays subscribed after the request. */
  retentionMs?: number;
  /** Lease renewal, shared demand and status period. */
  renewMs?: number;
  /** A snapshot completes a stream quote for this long. */
  completionMs?: number;
}

type RelayMessage =
  | { type: 'quote'; update: StreamedQuote }
  | { type: 'status'; status: QuoteStreamStatus }
  | { type: 'need'; symbols: string[] };

/** A replica's needs are kept this many renewals beyond the last one, so a holder never drops a live need. */
const NEED_RENEWALS = 4;
/** A symbol the broker does not know is taken as unknown for this long. */
const MISSING_MS = 3_600_000;

export class SharedQuoteStream {
  readonly broker: BrokerKind;
  private readonly demand: QuoteDemand;
  private readonly quotes = new Map<string, StreamedQuote>();
  private readonly bases = new Map<string, { quote: BrokerQuote; at: number }>();
  private readonly missing = new Map<string, number>();
  private readonly listeners = new Set<(update: StreamedQuote) => void>();
  private readonly renewMs: number;
  private readonly retentionMs: number;
  private readonly completionMs: number;
  private feed: BrokerQuoteStream | undefined;
  private unlisten: (() => void) | undefined;
  private channel: RelayChannel | undefined;
  private relayed: { status: QuoteStreamStatus; at: number } | undefined;
  private subscribed = new Set<string>();
  private role: StreamRole;
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;
  private closed = false;

  constructor(private readonly options: SharedQuoteStreamOptions) {
    this.broker = options.broker;
    this.retentionMs = options.retentionMs ?? 60_000;
    this.demand = new QuoteDemand(this.retentionMs);
    this.renewMs = options.renewMs ?? 1_000;
    this.completionMs = options.completionMs ?? 300_000;
    this.role = options.relay === undefined ? 'local' : 'relayed';
  }

  private get leaseName(): string {
    return `stream:${this.options.scope}:brokerQuotes`;
  }

  start(): void {
    if (this.timer !== undefined || this.closed) return;
    const { relay } = this.options;
    if (relay === undefined) this.takeFeed();
    else this.channel = relay.channel(this.leaseName, (payload) => this.receive(payload as RelayMessage));
    this.timer = setInterval(() => void this.renew(), this.renewMs);
    this.timer.unref();
    void this.renew();
  }

  /** A stream topic's viewers need `symbols` until `release(holder)`. */
  hold(holder: object, symbols: readonly string[]): void {
    if (this.demand.hold(holder, symbols, Date.now())) this.needed(symbols);
  }

  release(holder: object): void {
    this.demand.release(holder);
  }

  /** A REST request for `symbols`: they stay subscribed for the retention after it. */
  touch(symbols: readonly string[]): void {
    if (this.demand.touch(symbols, Date.now())) this.needed(symbols);
  }

  onQuote(listener: (update: StreamedQuote) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Quotes are served from the stream: the feed is connected, here or (as its holder keeps saying) elsewhere. */
  available(now = Date.now()): boolean {
    if (this.feed !== undefined) return this.feed.status().state === 'connected';
    return this.relayed !== undefined && now - this.relayed.at < this.renewMs * 3.5 && this.relayed.status.state === 'connected';
  }

  /** The stream's quote of `symbol`, completed by a snapshot where it lacks fields; undefined when a snapshot is needed. */
  quote(symbol: string, now = Date.now()): StreamedQuote | undefined {
    const update = this.quotes.get(symbol);
    if (update === undefined) return undefined;
    if (update.complete) return update;
    const base = this.bases.get(symbol);
    if (base === undefined || now - base.at > this.completionMs) return undefined;
    return { ...update, quote: completeQuote(update.quote, base.quote) };
  }

  /** The broker does not know `symbol` (a snapshot said so recently). */
  isMissing(symbol: string, now = Date.now()): boolean {
    const at = this.missing.get(symbol);
    return at !== undefined && now - at < MISSING_MS;
  }

  /**
   * The REST body for `symbols` from the stream alone, with the newest tick's time; undefined when the
   * stream cannot answer every symbol (not available, not subscribed yet, or not complete).
   */
  answer(symbols: readonly string[], now = Date.now()): { body: BrokerQuotes; newestTickAt: number } | undefined {
    if (!this.available(now)) return undefined;
    const quotes: BrokerQuotes['quotes'] = {};
    const missing: string[] = [];
    let newestTickAt = 0;
    for (const symbol of symbols) {
      if (this.isMissing(symbol, now)) {
        missing.push(symbol);
        continue;
      }
      const update = this.quote(symbol, now);
      if (update === undefined) return undefined;
      quotes[symbol] = update.quote;
      newestTickAt = Math.max(newestTickAt, update.tickAt);
    }
    return { body: { quotes, missing }, newestTickAt };
  }

  /** A snapshot's answer: it completes the stream's quotes of its symbols and names the unknown ones. */
  learn(body: BrokerQuotes, now = Date.now()): void {
    for (const [symbol, quote] of Object.entries(body.quotes)) this.bases.set(symbol, { quote, at: now });
    for (const symbol of body.missing) this.missing.set(symbol, now);
  }

  status(): SharedStreamStatus {
    const now = Date.now();
    const base: QuoteStreamStatus = this.feed?.status() ??
      this.relayed?.status ?? {
        broker: this.broker,
        state: 'connecting',
        subscriptions: 0,
        lastTickAgeMs: null,
        reconnects: 0,
        lastError: null,
      };
    const lastTickAgeMs =
      this.feed === undefined && this.relayed !== undefined && base.lastTickAgeMs !== null
        ? base.lastTickAgeMs + (now - this.relayed.at)
        : base.lastTickAgeMs;
    return { ...base, lastTickAgeMs, role: this.role, available: this.available(now) };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.channel?.close();
    await this.dropFeed();
    if (this.role === 'holder') await this.options.relay?.release(this.leaseName);
    this.listeners.clear();
  }

  private needed(symbols: readonly string[]): void {
    if (this.feed !== undefined) {
      void this.sync();
      void this.shareDemand();
      return;
    }
    // In the shared set first, so that the holder's next renewal keeps what it subscribes at the announcement.
    void this.shareDemand().then(() => this.channel?.publish({ type: 'need', symbols: [...symbols] } satisfies RelayMessage));
  }

  /** Every renewal: this replica's needs into the shared set, the lease, and the holder's subscriptions. */
  private async renew(): Promise<void> {
    if (this.renewing || this.closed) return;
    this.renewing = true;
    try {
      this.forgetUnneeded();
      const { relay } = this.options;
      if (relay === undefined) return await this.sync();
      await this.shareDemand();
      const held = await relay.hold(this.leaseName);
      if (this.closed) return;
      // Redis cannot say: keep the role; a replica without the feed falls back to snapshots meanwhile.
      if (held === undefined) return;
      if (held && this.feed === undefined) this.takeFeed();
      else if (!held && this.feed !== undefined) {
        this.options.logger.warn({ broker: this.broker }, 'another replica holds the broker stream now; handing it over');
        await this.dropFeed();
        this.role = 'relayed';
      }
      if (this.feed !== undefined) {
        await this.sync();
        this.channel?.publish({ type: 'status', status: this.feed.status() } satisfies RelayMessage);
      }
    } catch (error) {
      this.options.logger.warn({ err: error, broker: this.broker }, 'broker stream renewal failed');
    } finally {
      this.renewing = false;
    }
  }

  /** The feed subscribes what is needed: here (embedded), or by any replica (the shared set, with Redis). */
  private async sync(): Promise<void> {
    const feed = this.feed;
    if (feed === undefined) return;
    const now = Date.now();
    const wanted = new Set(this.demand.wanted(now, this.renewMs * NEED_RENEWALS).keys());
    const relay = this.options.relay;
    if (relay !== undefined) for (const symbol of (await this.sharedNeeds(relay, now)) ?? this.subscribed) wanted.add(symbol);
    if (this.feed !== feed) return;
    const added = [...wanted].filter((s) => !this.subscribed.has(s));
    const removed = [...this.subscribed].filter((s) => !wanted.has(s));
    this.subscribed = wanted;
    if (added.length > 0) feed.subscribe(added);
    if (removed.length > 0) feed.unsubscribe(removed);
  }

  private async shareDemand(): Promise<void> {
    const relay = this.options.relay;
    if (relay === undefined) return;
    const now = Date.now();
    const needs = this.demand.wanted(now, this.renewMs * NEED_RENEWALS);
    if (needs.size === 0) return;
    const args: (string | number)[] = [];
    for (const [symbol, until] of needs) args.push(until, symbol);
    const key = this.demandKey(relay);
    // GT: a replica never shortens another's need for the same symbol. The set itself goes after the
    // longest need any replica can have, once nobody renews it.
    await relay.degraded.attempt(
      'stream-leases',
      async (client) => {
        await client.zadd(key, 'GT', ...args);
        return client.pexpire(key, this.retentionMs + this.renewMs * (NEED_RENEWALS + 1));
      },
      () => 0,
    );
  }

  /** Every replica's needs that have not expired; undefined when Redis cannot say. */
  private sharedNeeds(relay: TopicRelay, now: number): Promise<string[] | undefined> {
    const key = this.demandKey(relay);
    return relay.degraded.attempt(
      'stream-leases',
      async (client) => {
        await client.zremrangebyscore(key, '-inf', now);
        return client.zrangebyscore(key, now, '+inf');
      },
      () => undefined,
    );
  }

  private demandKey(relay: TopicRelay): string {
    return relay.redis.key(`${this.leaseName}:demand`);
  }

  private takeFeed(): void {
    const feed = this.options.create();
    this.feed = feed;
    this.subscribed = new Set();
    this.role = this.options.relay === undefined ? 'local' : 'holder';
    this.unlisten = feed.onQuote((update) => {
      this.apply(update);
      this.channel?.publish({ type: 'quote', update } satisfies RelayMessage);
    });
    feed.start();
    if (this.role === 'holder') this.options.logger.info({ broker: this.broker }, 'this replica holds the broker stream');
  }

  private async dropFeed(): Promise<void> {
    const feed = this.feed;
    this.feed = undefined;
    this.unlisten?.();
    this.unlisten = undefined;
    this.subscribed = new Set();
    await feed?.close();
  }

  private receive(message: RelayMessage): void {
    if (message.type === 'quote') {
      // The holder streams what every replica needs: this one keeps what it needs.
      if (this.feed === undefined && this.demand.needs(message.update.symbol, Date.now())) this.apply(message.update);
    } else if (message.type === 'status') {
      if (this.feed === undefined) this.relayed = { status: message.status, at: Date.now() };
    } else if (this.feed !== undefined) {
      // Another replica needs new symbols: subscribed at once, kept while the shared set holds them.
      const fresh = message.symbols.filter((s) => !this.subscribed.has(s));
      if (fresh.length > 0) {
        for (const s of fresh) this.subscribed.add(s);
        this.feed.subscribe(fresh);
      }
    }
  }

  private apply(update: StreamedQuote): void {
    this.quotes.set(update.symbol, update);
    for (const listener of this.listeners) {
      try {
        listener(update);
      } catch (error) {
        this.options.logger.error({ err: error }, 'broker quote listener failed');
      }
    }
  }

  /** Quotes and completions of symbols this replica no longer needs are dropped. */
  private forgetUnneeded(): void {
    const now = Date.now();
    for (const map of [this.quotes, this.bases] as Map<string, unknown>[])
      for (const symbol of map.keys()) if (!this.demand.needs(symbol, now) && !this.subscribed.has(symbol)) map.delete(symbol);
    for (const [symbol, at] of this.missing) if (now - at >= MISSING_MS) this.missing.delete(symbol);
  }
}
