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
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { BrokerQuoteStream, QuoteStreamState, QuoteStreamStatus, StreamedQuote } from '../../broker/quote-stream.js';
import { QuoteUpdates } from '../../broker/quote-updates.js';
import { discardSocket } from '../../broker/discard-socket.js';
import { ReconnectSchedule } from '../../broker/reconnect-schedule.js';
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
import { proxyAgentFor, socketProblem } from '../outbound-proxy.js';

/** What the socket needs from Tastytrade's REST side. */
interface TastytradeStreamSession {
  /** GET /api-quote-tokens with the OAuth access token. */
  quoteToken(): Promise<QuoteToken>;
}

export interface TastytradeQuoteStreamOptions {
  session: TastytradeStreamSession;
  logger: Logger;
  /** The clock a quote token's 24 hours are counted on (tests move it); silences are timed on the real one. */
  now?: () => number;
  /** Asked of the server in SETUP: how long it may wait for us (s); it answers with the timeout it applies. */
  keepaliveTimeoutSec?: number;
  /** Asked of the server in SETUP: how soon we want to notice its silence (s); it sends keepalives to match. */
  acceptKeepaliveTimeoutSec?: number;
  /** A quote token is renewed this long before its documented 24 hours end. */
  tokenRenewMarginMs?: number;
  /** From the socket's opening to an open feed channel. */
  authTimeoutMs?: number;
  /** Back-off between connection attempts: doubles from the first to the cap, with jitter. */
  backOffMs?: { first: number; max: number };
  /** The longest FEED_SUBSCRIPTION text (dxFeed's client sends at most 8192 characters; a long one is closed with 1009). */
  maxSubscriptionChars?: number;
  /** How often silence, renewals and idleness are looked at. */
  watchMs?: number;
  /** A socket with nothing subscribed is closed after this long. */
  idleMs?: number;
}

interface SymbolState {
  streamer: string;
  symbols: Set<string>;
  fields: SymbolFields;
  tickAt: number;
}

type Phase = 'setup' | 'auth' | 'channel' | 'ready';

const FEED_CHANNEL = 1;
const CLIENT_VERSION = '0.1-market-data-proxy/1.0.0';
const EVENT_TYPES = Object.keys(EVENT_FIELDS) as EventType[];

export class TastytradeQuoteStream implements BrokerQuoteStream {
  readonly broker = 'tastytrade' as const;
  /** Our symbol -> its streamer symbol. */
  private readonly wanted = new Map<string, string>();
  private readonly byStreamer = new Map<string, SymbolState>();
  private readonly updates: QuoteUpdates;
  private readonly reconnect: ReconnectSchedule;
  /** The fields of each event type as the server sends them (its FEED_CONFIG, else what was asked). */
  private eventFields: Record<string, readonly string[]> = { ...EVENT_FIELDS };
  private token: { value: QuoteToken; renewAt: number } | undefined;
  private renewing: Promise<void> | undefined;
  private renewTriedAt = -Infinity;
  private socket: WebSocket | undefined;
  private phase: Phase = 'setup';
  private state: QuoteStreamState = 'off';
  private started = false;
  private closed = false;
  private lastError: string | null = null;
  private lastTickAt: number | undefined;
  private lastReceivedAt = 0;
  /** How long the server may stay silent (its SETUP's keepaliveTimeout), and how often we send KEEPALIVE. */
  private serverSilenceMs = 0;
  private keepaliveEveryMs = 0;
  private lastSentAt = 0;
  private idleSince: number | undefined;
  private connecting: Promise<void> | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private authTimer: NodeJS.Timeout | undefined;
  /** AUTH messages sent (renewals included), for tests. */
  authsSent = 0;
  private readonly options: Required<Omit<TastytradeQuoteStreamOptions, 'session' | 'logger'>> & TastytradeQuoteStreamOptions;

  constructor(options: TastytradeQuoteStreamOptions) {
    this.options = {
      now: Date.now,
      keepaliveTimeoutSec: 60,
      acceptKeepaliveTimeoutSec: 20,
      tokenRenewMarginMs: 3_600_000,
      authTimeoutMs: 10_000,
      backOffMs: { first: 1_000, max: 30_000 },
      maxSubscriptionChars: 8_192,
      watchMs: 1_000,
      idleMs: 30_000,
      ...options,
    };
    this.updates = new QuoteUpdates(options.logger);
    this.reconnect = new ReconnectSchedule(this.options.backOffMs);
  }

  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.state = 'disconnected';
    this.watchTimer = setInterval(() => this.watch(), this.options.watchMs);
    this.watchTimer.unref();
    if (this.wanted.size > 0) this.connect();
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
    if (this.wanted.size > 0) this.idleSince = undefined;
    if (this.phase === 'ready') this.sendSubscriptions('add', added);
    if (this.started && this.socket === undefined && !this.reconnect.pending) this.connect();
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
    if (this.phase === 'ready') this.sendSubscriptions('remove', removed);
    if (this.wanted.size === 0) this.idleSince ??= Date.now();
  }

  onQuote(listener: (update: StreamedQuote) => void): () => void {
    return this.updates.on(listener);
  }

  latest(symbol: string): StreamedQuote | undefined {
    return this.updates.latest(symbol);
  }

  status(): QuoteStreamStatus {
    const now = Date.now();
    // A socket whose server went quiet is dead before the timeout replaces it: said so at once.
    const silentMs = now - this.lastReceivedAt;
    const silent = this.phase === 'ready' && silentMs > this.serverSilenceMs * 0.75;
    return {
      broker: 'tastytrade',
      state: silent ? 'disconnected' : this.state,
      subscriptions: this.phase === 'ready' ? this.byStreamer.size : 0,
      lastTickAgeMs: this.lastTickAt === undefined ? null : now - this.lastTickAt,
      reconnects: this.reconnect.reconnects,
      lastError: silent ? `nothing from DXLink for ${Math.round(silentMs / 1000)} s` : this.lastError,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.state = 'off';
    clearInterval(this.watchTimer);
    this.reconnect.cancel();
    this.drop(1000);
    this.updates.clear();
    await this.connecting?.catch(() => {});
    await this.renewing?.catch(() => {});
  }

  private connect(): void {
    if (this.closed || this.connecting !== undefined || this.socket !== undefined) return;
    this.reconnect.cancel();
    this.state = 'connecting';
    this.connecting = this.open().finally(() => {
      this.connecting = undefined;
    });
  }

  /** The held quote token, or a new one when none is held or it is due for renewal. */
  private async quoteToken(): Promise<QuoteToken> {
    const held = this.token;
    if (held !== undefined && this.options.now() < held.renewAt) return held.value;
    const value = await this.options.session.quoteToken();
    this.token = { value, renewAt: this.options.now() + QUOTE_TOKEN_LIFETIME_MS - this.options.tokenRenewMarginMs };
    return value;
  }

  private async open(): Promise<void> {
    let token: QuoteToken;
    try {
      token = await this.quoteToken();
    } catch (error) {
      const refused = error instanceof TokenRefusedError || (error instanceof ApiError && /refused/.test(error.message));
      this.failed(`no quote token: ${error instanceof ApiError ? error.message : 'Tastytrade could not be reached'}`, refused);
      return;
    }
    if (this.closed || this.wanted.size === 0) {
      this.state = this.closed ? 'off' : 'disconnected';
      return;
    }
    const socket = new WebSocket(token.url, {
      headers: { 'user-agent': USER_AGENT },
      handshakeTimeout: this.options.authTimeoutMs,
      perMessageDeflate: false,
      agent: proxyAgentFor(token.url),
    });
    this.socket = socket;
    this.phase = 'setup';
    this.eventFields = { ...EVENT_FIELDS };
    socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      this.lost(socket, `DXLink refused the websocket (HTTP ${status})`, false);
    });
    socket.on('open', () => {
      const now = Date.now();
      this.lastReceivedAt = now;
      this.authTimer = setTimeout(() => this.lost(socket, 'DXLink did not open a feed channel in time', false), this.options.authTimeoutMs);
      this.send({
        type: 'SETUP',
        channel: 0,
        version: CLIENT_VERSION,
        keepaliveTimeout: this.options.keepaliveTimeoutSec,
        acceptKeepaliveTimeout: this.options.acceptKeepaliveTimeoutSec,
      });
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary || this.socket !== socket) return;
      this.lastReceivedAt = Date.now();
      this.handle(parseDxlinkMessage(data.toString()), token.token);
    });
    socket.on('close', (code) => {
      if (this.socket !== socket) return;
      const tooLong = code === 1009 ? ': a message was too long' : '';
      this.lost(socket, `the DXLink websocket closed (code ${code}${tooLong})`, false);
    });
    socket.on('error', (error: Error & { code?: string }) => {
      if (this.socket === socket) this.lost(socket, socketProblem('the DXLink websocket', error), false);
    });
  }

  private handle(message: DxlinkMessage, token: string): void {
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
        return this.authState(message.authorized, token);
      case 'channel-opened':
        if (message.channel === FEED_CHANNEL && this.phase === 'channel') this.feedOpened();
        return;
      case 'channel-closed':
        if (message.channel === FEED_CHANNEL) this.lost(this.socket, 'DXLink closed the feed channel', false);
        return;
      case 'feed-config':
        if (message.eventFields !== undefined) this.eventFields = { ...this.eventFields, ...message.eventFields };
        return;
      case 'feed-data':
        if (message.channel === FEED_CHANNEL) this.feedData(message.data);
        return;
      case 'error':
        // A TIMEOUT (our keepalive was late), UNAUTHORIZED or any other error ends the socket's use.
        this.lost(this.socket, `DXLink reported an error: ${message.error}`, message.error === 'UNAUTHORIZED');
        return;
      case 'unreadable':
        this.options.logger.warn({ upstream: 'tastytrade', reason: message.reason }, 'DXLink message unreadable');
        return;
      default:
        return;
    }
  }

  private authState(authorized: boolean, token: string): void {
    if (!authorized) {
      if (this.phase === 'setup') {
        this.phase = 'auth';
        this.authsSent += 1;
        this.send({ type: 'AUTH', channel: 0, token });
        return;
      }
      // The token was refused, or expired under the open socket: a new one for the next connection.
      this.token = undefined;
      this.lost(this.socket, 'DXLink refused the quote token (AUTH_STATE UNAUTHORIZED)', true);
      return;
    }
    if (this.phase !== 'auth') return;
    this.phase = 'channel';
    this.send({ type: 'CHANNEL_REQUEST', channel: FEED_CHANNEL, service: 'FEED', parameters: { contract: 'AUTO' } });
  }

  private feedOpened(): void {
    clearTimeout(this.authTimer);
    this.send({
      type: 'FEED_SETUP',
      channel: FEED_CHANNEL,
      acceptAggregationPeriod: 0.1,
      acceptDataFormat: 'COMPACT',
      acceptEventFields: EVENT_FIELDS,
    });
    this.phase = 'ready';
    this.state = 'connected';
    this.reconnect.succeeded();
    this.lastError = null;
    this.sendSubscriptions('add', [...this.byStreamer.keys()], true);
    this.options.logger.info({ upstream: 'tastytrade', symbols: this.byStreamer.size }, 'DXLink feed connected');
  }

  private feedData(data: unknown): void {
    const now = Date.now();
    for (const event of feedEvents(data, this.eventFields)) {
      const state = this.byStreamer.get(event.eventSymbol);
      if (state === undefined) continue;
      this.lastTickAt = now;
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

  /** Server silence, our keepalive, the token's renewal, an idle socket. */
  private watch(): void {
    const now = Date.now();
    if (this.socket !== undefined && this.wanted.size === 0 && this.idleSince !== undefined && now - this.idleSince > this.options.idleMs) {
      this.drop(1000);
      this.state = 'disconnected';
      return;
    }
    if (this.phase !== 'ready' || this.socket === undefined) return;
    if (now - this.lastReceivedAt > this.serverSilenceMs) {
      this.lost(this.socket, `nothing from DXLink for ${Math.round((now - this.lastReceivedAt) / 1000)} s`, false);
      return;
    }
    if (now - this.lastSentAt >= this.keepaliveEveryMs) this.send({ type: 'KEEPALIVE', channel: 0 });
    const wall = this.options.now();
    if (this.token !== undefined && wall >= this.token.renewAt && this.renewing === undefined && now - this.renewTriedAt > 60_000) {
      this.renewTriedAt = now;
      this.renewing = this.renew().finally(() => {
        this.renewing = undefined;
      });
    }
  }

  /** A new quote token before the held one ends, authorised on the open socket without dropping it. */
  private async renew(): Promise<void> {
    const socket = this.socket;
    try {
      const token = await this.quoteToken();
      if (this.socket !== socket || this.phase !== 'ready') return;
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
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    this.lastSentAt = Date.now();
    this.socket.send(JSON.stringify(message));
  }

  /** The socket is gone or useless: close it and try again after the back-off. */
  private lost(socket: WebSocket | undefined, reason: string, unauthenticated: boolean): void {
    if (socket === undefined || socket !== this.socket) return;
    this.drop(undefined);
    this.failed(reason, unauthenticated);
  }

  private failed(reason: string, unauthenticated: boolean): void {
    this.lastError = reason;
    if (this.closed) return;
    this.state = unauthenticated ? 'unauthenticated' : 'disconnected';
    this.options.logger.warn({ upstream: 'tastytrade', reason, attempt: this.reconnect.attempts }, 'DXLink feed lost; reconnecting');
    this.reconnect.after(() => {
      if (this.wanted.size > 0) this.connect();
    });
  }

  private drop(code: number | undefined): void {
    clearTimeout(this.authTimer);
    const socket = this.socket;
    this.socket = undefined;
    this.phase = 'setup';
    if (socket !== undefined) discardSocket(socket, code);
  }
}
