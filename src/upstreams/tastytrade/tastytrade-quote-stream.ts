// Tastytrade's real-time quotes over DXLink (dxFeed's websocket protocol), as a BrokerQuoteStream. A quote
// token from GET /api-quote-tokens (with the OAuth access token) names the socket and authorises it; it is
// kept for its documented 24 hours less a margin, renewed on the open socket before then (a new AUTH), and
// dropped when DXLink refuses it. Each connection: SETUP, AUTH once the server has said UNAUTHORIZED
// (Tastytrade's support requires that order; an early AUTH is dropped under load: tastyware/tastytrade#339),
// one FEED channel, FEED_SETUP in COMPACT for Quote, Trade and Summary (the previous close), then
// FEED_SUBSCRIPTION in chunks. KEEPALIVE goes out at half the timeout the server allows, and a server silent
// past the timeout it announced is dead. Every failure (refused upgrade, refused AUTH, expired token, drop,
// silence, an ERROR) reconnects with exponential back-off and jitter, every subscription sent again.
//
// Why not @dxfeed/dxlink-api (0.3.0, dxFeed's client, which Tastytrade's SDK wraps): run in Node 24 against
// the simulator (test/upstreams/tastytrade/dxlink-api-client.test.ts) it speaks the protocol (COMPACT,
// chunking at 8192 characters, keepalives, auth-state callbacks over Node's global WebSocket), but after a
// transport close while unauthorised (a refused upgrade, a refused or expired token) it forgets the token
// and stops reconnecting for good, its reconnect delay grows by 1 s per attempt without jitter or cap, it
// cannot tell an HTTP refusal of the upgrade from a network failure, and it reports unreadable frames with
// console.error. Wrapping it would mean rebuilding the client on each of those; the protocol is six messages.
// It stays the third-party client the simulator is proved against, and this client chunks as it does.
//
// The socket's lifecycle (connection, authorisation deadline, silence watch, back-off, idleness, the renewal
// under way) is FeedSocket's (../feed-socket.ts), shared with IBKR's feed; this file is DXLink's protocol.
import type { Logger } from 'pino';
import type { BrokerQuoteStream } from '../../broker/quote-stream.js';
import { ApiError } from '../../core/errors.js';
import {
  EVENT_FIELDS,
  type EventType,
  eventTime,
  type DxlinkMessage,
  feedEvents,
  mergeEvent,
  parseDxlinkMessage,
  type SymbolFields,
  streamedQuote,
} from './parse-dxlink-message.js';
import { QUOTE_TOKEN_LIFETIME_MS, type QuoteToken } from './parse-quote-token.js';
import { toStreamerSymbol } from './symbols.js';
import { USER_AGENT } from './tastytrade-client.js';
import { TokenRefusedError } from './token-manager.js';
import { type FeedAddress, type FeedFailure, FeedSocket, type FeedTimings } from '../feed-socket.js';
import type { OutboundProxy } from '../outbound-proxy.js';
import { FeedQuoteStream } from '../feed-quote-stream.js';

/** What the socket needs from Tastytrade's REST side. */
interface TastytradeStreamSession {
  /** GET /api-quote-tokens with the OAuth access token. */
  quoteToken(): Promise<QuoteToken>;
}

export interface TastytradeQuoteStreamOptions extends FeedTimings {
  session: TastytradeStreamSession;
  logger: Logger;
  /** The proxy the DXLink address is reached through, if any; direct when not given. */
  outbound?: OutboundProxy;
  /** The clock a quote token's 24 hours are counted on (tests move it); silences are timed on the real one. */
  now?: () => number;
  /** Asked of the server in SETUP: how long it may wait for us (s); it answers with the timeout it applies. */
  keepaliveTimeoutSec?: number;
  /** Asked of the server in SETUP: how soon we want to notice its silence (s); it sends keepalives to match. */
  acceptKeepaliveTimeoutSec?: number;
  /** A quote token is renewed this long before its documented 24 hours end. */
  tokenRenewMarginMs?: number;
  /** The longest FEED_SUBSCRIPTION text (dxFeed's client sends at most 8192 characters; a long one is closed with 1009). */
  maxSubscriptionChars?: number;
}

interface SymbolState {
  streamer: string;
  symbols: Set<string>;
  fields: SymbolFields;
  tickAt: number;
}

/** The steps before the feed channel is open (then the socket is authorised: FeedSocket says so). */
type Phase = 'setup' | 'auth' | 'channel';

const FEED_CHANNEL = 1;
const CLIENT_VERSION = '0.1-market-data-proxy/1.0.0';
const EVENT_TYPES = Object.keys(EVENT_FIELDS) as EventType[];

export class TastytradeQuoteStream extends FeedQuoteStream implements BrokerQuoteStream {
  readonly broker = 'tastytrade' as const;
  /** Our symbol -> its streamer symbol. */
  private readonly wanted = new Map<string, string>();
  private readonly byStreamer = new Map<string, SymbolState>();
  protected readonly link: FeedSocket;
  /** The fields of each event type as the server sends them (its FEED_CONFIG, else what was asked). */
  private eventFields: Record<string, readonly string[]> = { ...EVENT_FIELDS };
  private token: { value: QuoteToken; renewAt: number } | undefined;
  /** The token the socket being opened authorises with. */
  private authToken = '';
  private phase: Phase = 'setup';
  /** How long the server may stay silent (its SETUP's keepaliveTimeout), and how often we send KEEPALIVE. */
  private serverSilenceMs = 0;
  private keepaliveEveryMs = 0;
  /** AUTH messages sent (renewals included), for tests. */
  authsSent = 0;
  private readonly options: Required<Omit<TastytradeQuoteStreamOptions, 'session' | 'logger' | 'outbound' | keyof FeedTimings>> &
    TastytradeQuoteStreamOptions;

  constructor(options: TastytradeQuoteStreamOptions) {
    super(options.logger);
    this.options = {
      now: Date.now,
      keepaliveTimeoutSec: 60,
      acceptKeepaliveTimeoutSec: 20,
      tokenRenewMarginMs: 3_600_000,
      maxSubscriptionChars: 8_192,
      ...options,
    };
    this.link = new FeedSocket(
      {
        wanted: () => this.wanted.size > 0,
        prepare: () => this.prepare(),
        opened: () => this.opened(),
        frame: (text) => {
          // Any frame shows the server alive (DXLink's keepalives come only when nothing else does).
          this.link.heard();
          this.handle(parseDxlinkMessage(text));
        },
        watch: (now) => this.watch(now),
        closed: (code) => (code === 1009 ? 'the DXLink websocket closed (code 1009: a message was too long)' : undefined),
        dropped: () => {
          this.phase = 'setup';
        },
      },
      {
        broker: 'tastytrade',
        logger: options.logger,
        outbound: options.outbound,
        words: {
          socket: 'the DXLink websocket',
          server: 'DXLink',
          notAuthorised: 'DXLink did not open a feed channel in time',
          silent: (seconds) => `nothing from DXLink for ${seconds} s`,
          lost: 'DXLink feed lost; reconnecting',
        },
        timings: options,
        silence: () => ({ staleMs: this.serverSilenceMs * 0.75, deadMs: this.serverSilenceMs }),
      },
    );
  }

  subscribe(symbols: readonly string[]): void {
    const added: string[] = [];
    for (const symbol of symbols) {
      if (this.wanted.has(symbol)) continue;
      const streamer = toStreamerSymbol(symbol);
      this.wanted.set(symbol, streamer);
      let state = this.byStreamer.get(streamer);
      if (state === undefined) {
        state = { streamer, symbols: new Set(), fields: {}, tickAt: 0 };
        this.byStreamer.set(streamer, state);
        added.push(streamer);
      }
      state.symbols.add(symbol);
      // A second symbol for a streamer symbol already streaming (an alias) has its quote at once.
      if (state.tickAt > 0) this.emit(state, symbol);
    }
    if (this.link.authorised) this.sendSubscriptions('add', added);
    this.link.subscribed();
  }

  unsubscribe(symbols: readonly string[]): void {
    const removed: string[] = [];
    for (const symbol of symbols) {
      const streamer = this.wanted.get(symbol);
      this.wanted.delete(symbol);
      this.updates.forget(symbol);
      const state = streamer === undefined ? undefined : this.byStreamer.get(streamer);
      if (state === undefined) continue;
      state.symbols.delete(symbol);
      if (state.symbols.size === 0) {
        this.byStreamer.delete(state.streamer);
        removed.push(state.streamer);
      }
    }
    if (this.link.authorised) this.sendSubscriptions('remove', removed);
    this.link.unsubscribed();
  }

  protected subscriptions(): number {
    return this.byStreamer.size;
  }

  /** The held quote token, or a new one when none is held or it is due for renewal. */
  private async quoteToken(): Promise<QuoteToken> {
    const held = this.token;
    if (held !== undefined && this.options.now() < held.renewAt) return held.value;
    const value = await this.options.session.quoteToken();
    this.token = { value, renewAt: this.options.now() + QUOTE_TOKEN_LIFETIME_MS - this.options.tokenRenewMarginMs };
    return value;
  }

  /** A quote token: it names the socket's address (Tastytrade has changed it) and authorises it. */
  private async prepare(): Promise<FeedAddress | FeedFailure> {
    try {
      const token = await this.quoteToken();
      this.authToken = token.token;
      return { url: token.url, headers: { 'user-agent': USER_AGENT } };
    } catch (error) {
      const refused = error instanceof TokenRefusedError || (error instanceof ApiError && /refused/.test(error.message));
      return {
        failure: `no quote token: ${error instanceof ApiError ? error.message : 'Tastytrade could not be reached'}`,
        unauthenticated: refused,
      };
    }
  }

  private opened(): void {
    this.phase = 'setup';
    this.eventFields = { ...EVENT_FIELDS };
    this.send({
      type: 'SETUP',
      channel: 0,
      version: CLIENT_VERSION,
      keepaliveTimeout: this.options.keepaliveTimeoutSec,
      acceptKeepaliveTimeout: this.options.acceptKeepaliveTimeoutSec,
    });
  }

  private handle(message: DxlinkMessage): void {
    switch (message.kind) {
      case 'setup': {
        const serverTimeoutSec = message.keepaliveTimeout ?? this.options.acceptKeepaliveTimeoutSec;
        const ourTimeoutSec = Math.min(
          this.options.keepaliveTimeoutSec,
          message.acceptKeepaliveTimeout ?? this.options.keepaliveTimeoutSec,
        );
        this.serverSilenceMs = serverTimeoutSec * 1000;
        this.keepaliveEveryMs = (ourTimeoutSec * 1000) / 2;
        return;
      }
      case 'auth-state':
        return this.authState(message.authorized);
      case 'channel-opened':
        if (message.channel === FEED_CHANNEL && this.phase === 'channel' && !this.link.authorised) this.feedOpened();
        return;
      case 'channel-closed':
        if (message.channel === FEED_CHANNEL) this.link.lost('DXLink closed the feed channel');
        return;
      case 'feed-config':
        if (message.eventFields !== undefined) this.eventFields = { ...this.eventFields, ...message.eventFields };
        return;
      case 'feed-data':
        if (message.channel === FEED_CHANNEL) this.feedData(message.data);
        return;
      case 'error':
        // A TIMEOUT (our keepalive was late), UNAUTHORIZED or any other error ends the socket's use.
        this.link.lost(`DXLink reported an error: ${message.error}`, message.error === 'UNAUTHORIZED');
        return;
      case 'unreadable':
        this.options.logger.warn({ upstream: 'tastytrade', reason: message.reason }, 'DXLink message unreadable');
        return;
      default:
        return;
    }
  }

  private authState(authorized: boolean): void {
    if (!authorized) {
      if (this.phase === 'setup') {
        this.phase = 'auth';
        this.authsSent += 1;
        this.send({ type: 'AUTH', channel: 0, token: this.authToken });
        return;
      }
      // The token was refused, or expired under the open socket: a new one for the next connection.
      this.token = undefined;
      this.link.lost('DXLink refused the quote token (AUTH_STATE UNAUTHORIZED)', true);
      return;
    }
    if (this.phase !== 'auth') return;
    this.phase = 'channel';
    this.send({ type: 'CHANNEL_REQUEST', channel: FEED_CHANNEL, service: 'FEED', parameters: { contract: 'AUTO' } });
  }

  private feedOpened(): void {
    this.send({
      type: 'FEED_SETUP',
      channel: FEED_CHANNEL,
      acceptAggregationPeriod: 0.1,
      acceptDataFormat: 'COMPACT',
      acceptEventFields: EVENT_FIELDS,
    });
    this.link.authorise();
    this.sendSubscriptions('add', [...this.byStreamer.keys()], true);
    this.options.logger.info({ upstream: 'tastytrade', symbols: this.byStreamer.size }, 'DXLink feed connected');
  }

  private feedData(data: unknown): void {
    const now = Date.now();
    for (const event of feedEvents(data, this.eventFields)) {
      const state = this.byStreamer.get(event.eventSymbol);
      if (state === undefined) continue;
      this.link.ticked(now);
      if (!mergeEvent(state.fields, event)) continue;
      // The event's own time, unless it has none or one ahead of our clock (a tick is never from the future).
      const at = eventTime(event);
      state.tickAt = at !== null && at <= now ? at : now;
      for (const symbol of state.symbols) this.emit(state, symbol);
    }
  }

  private emit(state: SymbolState, symbol: string): void {
    // The token's level says how fresh the feed is (api: real-time, demo: delayed).
    const level = this.token?.value.level ?? null;
    this.updates.publish(symbol, streamedQuote(symbol, state.fields, state.tickAt, level), state.tickAt);
  }

  /** FEED_SUBSCRIPTION for every event type of `streamers`, in messages no longer than the limit. */
  private sendSubscriptions(action: 'add' | 'remove', streamers: readonly string[], reset = false): void {
    const head = JSON.stringify({ type: 'FEED_SUBSCRIPTION', channel: FEED_CHANNEL, ...(reset ? { reset: true } : {}), [action]: [] });
    let chunk: { type: string; symbol: string }[] = [];
    let length = head.length;
    const flush = () => {
      if (chunk.length === 0 && !reset) return;
      this.send({ type: 'FEED_SUBSCRIPTION', channel: FEED_CHANNEL, ...(reset ? { reset: true } : {}), [action]: chunk });
      reset = false;
      chunk = [];
      length = head.length;
    };
    for (const symbol of streamers) {
      const entries = EVENT_TYPES.map((type) => ({ type, symbol }));
      const more = entries.reduce((sum, entry) => sum + JSON.stringify(entry).length + 1, 0);
      if (chunk.length > 0 && length + more > this.options.maxSubscriptionChars) flush();
      chunk.push(...entries);
      length += more;
    }
    flush();
  }

  /** On an authorised socket: our keepalive, and the token's renewal before its end. */
  private watch(now: number): void {
    if (!this.link.authorised) return;
    if (now - this.link.lastSentAt >= this.keepaliveEveryMs) this.send({ type: 'KEEPALIVE', channel: 0 });
    const token = this.token;
    if (token !== undefined && this.options.now() >= token.renewAt) this.link.renew((current) => this.renew(current));
  }

  /** A new quote token before the held one ends, authorised on the open socket without dropping it. */
  private async renew(current: () => boolean): Promise<void> {
    try {
      const token = await this.quoteToken();
      if (!current()) return;
      this.authsSent += 1;
      this.send({ type: 'AUTH', channel: 0, token: token.token });
    } catch (error) {
      this.options.logger.warn(
        { upstream: 'tastytrade', code: (error as { code?: string }).code },
        'quote token renewal failed; the held one is used until it is refused',
      );
    }
  }

  private send(message: Record<string, unknown>): void {
    this.link.send(JSON.stringify(message));
  }
}
