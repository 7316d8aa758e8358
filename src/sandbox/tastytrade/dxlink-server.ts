// The simulated DXLink endpoint (/realtime, the address GET /api-quote-tokens names), with the manners of
// the recorded exchange (test/fixtures/recorded/tastytrade/dxlink-*): SETUP answered with the server's
// SETUP and AUTH_STATE UNAUTHORIZED; AUTH with a token /api-quote-tokens issued and not expired gets
// AUTHORIZED with a userId, any other stays UNAUTHORIZED; CHANNEL_OPENED with contract and subFormat; FEED_SETUP
// answered by a FEED_CONFIG without event fields (as recorded), then, before a type's first events, a
// FEED_CONFIG naming its fields (dxLink's specification; dxFeed's own client cannot read COMPACT without it).
// FEED_DATA in COMPACT, several symbols of one type flattened in one array, "NaN" where a value is unknown
// (crypto's trade size and day volume, an index's bid and ask sizes), numbers past 10^7 in exponent form.
// A subscription first sends the last Summary, Quote and Trade; then each tick sends a Quote, and a Trade
// only when one printed. Nothing for stocks outside their sessions. A client silent past the server's
// keepalive timeout gets ERROR TIMEOUT and is closed; the server sends KEEPALIVE at half the timeout the
// client asked to notice its silence in. A token that expires under an open socket gets AUTH_STATE
// UNAUTHORIZED and the socket closed (not recorded: how the real server ends such a socket is not
// published). A FEED_SUBSCRIPTION longer than the limit closes the socket with 1009, as UPSTREAMS.md says.
// A `demo` quote token (Tastytrade's sandbox) names the /delayed address, whose events are a quarter of an
// hour behind the market, their times included.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { instrumentOf, type TastytradeInstrument, type TastytradeMarket, type TastytradeQuote } from './tastytrade-market.js';

export const DXLINK_PATH = '/realtime';
/** The address a `demo` token names: delayed data. */
export const DXLINK_DELAYED_PATH = '/delayed';
/** How far behind the delayed feed runs. */
const DELAY_MS = 15 * 60_000;
/** The server's version as recorded in its SETUP. */
const SERVER_VERSION = '1.0-1.2.1-20240722-153442';
const KNOWN_FIELDS: Record<string, readonly string[]> = {
  Quote: ['eventType', 'eventSymbol', 'bidPrice', 'askPrice', 'bidSize', 'askSize', 'bidTime', 'askTime'],
  Trade: ['eventType', 'eventSymbol', 'price', 'dayVolume', 'size', 'time'],
  Summary: ['eventType', 'eventSymbol', 'prevDayClosePrice', 'dayOpenPrice', 'openInterest'],
};

export interface DxlinkServerOptions {
  /** The longest silence allowed of a client, s (60, as recorded). */
  keepaliveTimeoutSec?: number;
  /** A quote token's life (24 hours). */
  tokenLifetimeMs?: number;
  /** The longest message accepted; a longer one closes the socket with 1009. */
  maxMessageBytes?: number;
  /** How often due ticks are looked for and sent. */
  tickLoopMs?: number;
}

/** What can go wrong on the socket, switched on by tests and benchmarks. */
export interface DxlinkFaults {
  /** Upgrades are answered 502 (seen intermittently at connect: UPSTREAMS.md). */
  refuseUpgrade: boolean;
  /** Every AUTH stays UNAUTHORIZED, whatever the token. */
  refuseAuth: boolean;
  /** Open sockets stay open and send nothing at all, keepalives included. */
  silent: boolean;
}

interface Subscribed {
  instrument: TastytradeInstrument | undefined;
  types: Set<string>;
  lastTick: number;
}

interface Connection {
  ws: WebSocket;
  /** 0 on /realtime; on /delayed, how far behind its events are. */
  delayMs: number;
  token: string | undefined;
  authorized: boolean;
  /** Keepalive timing: the client's allowed silence (ms), and how often the server must speak (ms). */
  clientTimeoutMs: number;
  serverEveryMs: number;
  lastReceivedAt: number;
  lastSentAt: number;
  silent: boolean;
  /** Feed channels: accepted fields per type, subscriptions by symbol, types whose fields were announced. */
  channels: Map<number, { fields: Record<string, readonly string[]>; subs: Map<string, Subscribed>; announced: Set<string> }>;
}

export class DxlinkServer {
  readonly faults: DxlinkFaults = { refuseUpgrade: false, refuseAuth: false, silent: false };
  /**
   * Upgrades accepted, AUTHs accepted and refused, keepalive timeouts, FEED_SUBSCRIPTION messages and their longest,
   * frames sent.
   */
  accepted = 0;
  authsAccepted = 0;
  authRefusals = 0;
  timeouts = 0;
  subscriptionMessages = 0;
  longestSubscriptionMessage = 0;
  keepalivesReceived = 0;
  framesSent = 0;
  private readonly tokens = new Map<string, number>();
  private readonly connections = new Set<Connection>();
  private readonly wss: WebSocketServer;
  private readonly ticker: NodeJS.Timeout;
  private readonly keepaliveTimeoutMs: number;
  private readonly tokenLifetimeMs: number;

  constructor(
    private readonly market: TastytradeMarket,
    private readonly now: () => number,
    options: DxlinkServerOptions = {},
  ) {
    this.keepaliveTimeoutMs = (options.keepaliveTimeoutSec ?? 60) * 1000;
    this.tokenLifetimeMs = options.tokenLifetimeMs ?? 24 * 3_600_000;
    this.wss = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes ?? 65_536 });
    this.ticker = setInterval(() => this.loop(), options.tickLoopMs ?? 20);
    this.ticker.unref();
  }

  get openSockets(): number {
    return this.connections.size;
  }

  /** Symbols subscribed on open sockets, each once per socket and channel. */
  *subscriptions(): Iterable<string> {
    for (const c of this.connections) for (const channel of c.channels.values()) yield* channel.subs.keys();
  }

  /** A new quote token, as GET /api-quote-tokens issues one. */
  issueToken(): string {
    const token = randomBytes(36).toString('base64url');
    this.tokens.set(token, this.now() + this.tokenLifetimeMs);
    return token;
  }

  /** Every quote token issued (tests check none leaks). */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  /** Every token issued so far has expired (sockets authorised with one hear so at the next tick loop). */
  expireTokens(): void {
    for (const token of this.tokens.keys()) this.tokens.set(token, -Infinity);
  }

  /** The server's 'upgrade' listener. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = new URL(req.url ?? '/', 'http://dxlink.local').pathname;
    if (path !== DXLINK_PATH && path !== DXLINK_DELAYED_PATH) return refuse(socket, 404, 'Not Found');
    if (this.faults.refuseUpgrade) return refuse(socket, 502, 'Bad Gateway');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.open(ws, path === DXLINK_DELAYED_PATH ? DELAY_MS : 0));
  }

  dropAll(): void {
    for (const c of this.connections) c.ws.terminate();
  }

  /** The sockets open now go dead without closing (a half-open connection); new ones are served. */
  silenceOpenSockets(): void {
    for (const c of this.connections) c.silent = true;
  }

  close(): void {
    clearInterval(this.ticker);
    for (const c of this.connections) c.ws.terminate();
    this.connections.clear();
    this.wss.close();
  }

  private open(ws: WebSocket, delayMs: number): void {
    this.accepted += 1;
    const now = Date.now();
    const c: Connection = {
      ws,
      delayMs,
      token: undefined,
      authorized: false,
      clientTimeoutMs: this.keepaliveTimeoutMs,
      serverEveryMs: this.keepaliveTimeoutMs / 2,
      lastReceivedAt: now,
      lastSentAt: now,
      silent: false,
      channels: new Map(),
    };
    this.connections.add(c);
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(c, data.toString());
    });
    ws.on('close', () => this.connections.delete(c));
    ws.on('error', () => {});
  }

  private receive(c: Connection, text: string): void {
    c.lastReceivedAt = Date.now();
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return this.send(c, { type: 'ERROR', channel: 0, error: 'INVALID_MESSAGE', message: 'Message is not JSON' });
    }
    const channel = typeof message.channel === 'number' ? message.channel : 0;
    switch (message.type) {
      case 'SETUP':
        return this.setup(c, message);
      case 'AUTH':
        return this.auth(c, message.token);
      case 'KEEPALIVE':
        this.keepalivesReceived += 1;
        return;
      default:
        break;
    }
    if (!c.authorized) return this.send(c, { type: 'ERROR', channel, error: 'UNAUTHORIZED', message: 'Not authorized' });
    if (message.type === 'CHANNEL_REQUEST') {
      if (message.service !== 'FEED' || channel % 2 === 0)
        return this.send(c, { type: 'ERROR', channel, error: 'INVALID_MESSAGE', message: 'Unknown service or even channel' });
      c.channels.set(channel, { fields: {}, subs: new Map(), announced: new Set() });
      return this.send(c, { type: 'CHANNEL_OPENED', channel, service: 'FEED', parameters: { contract: 'AUTO', subFormat: 'LIST' } });
    }
    const feed = c.channels.get(channel);
    if (feed === undefined) return;
    if (message.type === 'CHANNEL_CANCEL') {
      c.channels.delete(channel);
      return this.send(c, { type: 'CHANNEL_CLOSED', channel });
    }
    if (message.type === 'FEED_SETUP') {
      const asked = (message.acceptEventFields ?? {}) as Record<string, unknown>;
      for (const [type, fields] of Object.entries(asked)) {
        const known = KNOWN_FIELDS[type];
        if (known === undefined || !Array.isArray(fields)) continue;
        feed.fields[type] = fields.map(String).filter((f) => known.includes(f));
        feed.announced.delete(type);
      }
      return this.send(c, { type: 'FEED_CONFIG', channel, dataFormat: 'COMPACT', aggregationPeriod: 0.1 });
    }
    if (message.type === 'FEED_SUBSCRIPTION') return this.subscription(c, channel, message, text.length);
  }

  private setup(c: Connection, message: Record<string, unknown>): void {
    // The client's own timeout (how long it may be silent) and how soon it wants to notice our silence.
    const asked = (value: unknown, fallback: number) => (typeof value === 'number' && value > 0 ? value * 1000 : fallback);
    c.clientTimeoutMs = Math.min(this.keepaliveTimeoutMs, asked(message.keepaliveTimeout, this.keepaliveTimeoutMs));
    const notice = asked(message.acceptKeepaliveTimeout, this.keepaliveTimeoutMs);
    c.serverEveryMs = notice / 2;
    this.send(c, {
      type: 'SETUP',
      channel: 0,
      keepaliveTimeout: notice / 1000,
      acceptKeepaliveTimeout: c.clientTimeoutMs / 1000,
      version: SERVER_VERSION,
    });
    this.send(c, { type: 'AUTH_STATE', channel: 0, state: 'UNAUTHORIZED' });
  }

  private auth(c: Connection, token: unknown): void {
    const expiresAt = typeof token === 'string' ? this.tokens.get(token) : undefined;
    if (this.faults.refuseAuth || expiresAt === undefined || expiresAt <= this.now()) {
      this.authRefusals += 1;
      c.authorized = false;
      c.channels.clear();
      return this.send(c, { type: 'AUTH_STATE', channel: 0, state: 'UNAUTHORIZED' });
    }
    this.authsAccepted += 1;
    c.token = token as string;
    c.authorized = true;
    this.send(c, { type: 'AUTH_STATE', channel: 0, state: 'AUTHORIZED', userId: 'sandbox-user' });
  }

  private subscription(c: Connection, channel: number, message: Record<string, unknown>, length: number): void {
    this.subscriptionMessages += 1;
    this.longestSubscriptionMessage = Math.max(this.longestSubscriptionMessage, length);
    const feed = c.channels.get(channel);
    if (feed === undefined) return;
    if (message.reset === true) feed.subs.clear();
    const entries = (value: unknown) =>
      (Array.isArray(value) ? value : []).filter(
        (e): e is { type: string; symbol: string } => typeof e?.type === 'string' && typeof e?.symbol === 'string',
      );
    for (const { type, symbol } of entries(message.remove)) {
      const sub = feed.subs.get(symbol);
      sub?.types.delete(type);
      if (sub !== undefined && sub.types.size === 0) feed.subs.delete(symbol);
    }
    const fresh = new Map<string, Subscribed>();
    for (const { type, symbol } of entries(message.add)) {
      if (KNOWN_FIELDS[type] === undefined) continue;
      let sub = feed.subs.get(symbol);
      if (sub === undefined) {
        sub = { instrument: instrumentOf(symbol), types: new Set(), lastTick: Number.NaN };
        feed.subs.set(symbol, sub);
      }
      if (!sub.types.has(type)) fresh.set(symbol, sub);
      sub.types.add(type);
    }
    // The last known events of each new subscription, whether the market is open or not.
    const now = this.now() - c.delayMs;
    const events: Events = {};
    for (const [symbol, sub] of fresh) {
      if (sub.instrument === undefined) continue;
      const quote = this.market.quote(sub.instrument, now);
      sub.lastTick = quote.tick;
      for (const type of ['Summary', 'Quote', 'Trade'])
        if (sub.types.has(type)) collect(events, type, eventValues(type, symbol, sub.instrument, quote, now, true));
    }
    this.sendEvents(c, channel, events);
  }

  /** Ticks due, keepalives due, silent clients and expired tokens. */
  private loop(): void {
    // Tokens and the market on the simulator's clock (tests move it), silences on the real one.
    const now = this.now();
    const real = Date.now();
    for (const c of this.connections) {
      if (real - c.lastReceivedAt > c.clientTimeoutMs) {
        this.timeouts += 1;
        this.send(c, { type: 'ERROR', channel: 0, error: 'TIMEOUT', message: `No keepalive received for ${real - c.lastReceivedAt}ms` });
        c.ws.close(1000);
        continue;
      }
      if (c.authorized && c.token !== undefined && (this.tokens.get(c.token) ?? -Infinity) <= now) {
        c.authorized = false;
        this.send(c, { type: 'AUTH_STATE', channel: 0, state: 'UNAUTHORIZED' });
        c.ws.close(1000);
        continue;
      }
      if (c.authorized) for (const [channel, feed] of c.channels) this.tick(c, channel, feed.subs, now - c.delayMs);
      if (real - c.lastSentAt >= c.serverEveryMs) this.send(c, { type: 'KEEPALIVE', channel: 0 });
    }
  }

  private tick(c: Connection, channel: number, subs: Map<string, Subscribed>, now: number): void {
    const events: Events = {};
    for (const [symbol, sub] of subs) {
      const instrument = sub.instrument;
      if (instrument === undefined || !this.market.trades(instrument, now)) continue;
      const quote = this.market.quote(instrument, now);
      if (quote.tick === sub.lastTick) continue;
      sub.lastTick = quote.tick;
      if (sub.types.has('Quote')) collect(events, 'Quote', eventValues('Quote', symbol, instrument, quote, now, false));
      if (sub.types.has('Trade') && quote.tradeSize !== null)
        collect(events, 'Trade', eventValues('Trade', symbol, instrument, quote, now, false));
    }
    this.sendEvents(c, channel, events);
  }

  /** One FEED_DATA per type, in the channel's accepted field order; a type's fields are announced before its first events. */
  private sendEvents(c: Connection, channel: number, events: Events): void {
    const feed = c.channels.get(channel);
    if (feed === undefined) return;
    for (const [type, list] of Object.entries(events)) {
      const fields = feed.fields[type];
      if (fields === undefined || fields.length === 0 || list.length === 0) continue;
      if (!feed.announced.has(type)) {
        feed.announced.add(type);
        this.send(c, { type: 'FEED_CONFIG', channel, dataFormat: 'COMPACT', aggregationPeriod: 0.1, eventFields: { [type]: fields } });
      }
      const values: unknown[] = [];
      for (const event of list) for (const field of fields) values.push(event[field] ?? 'NaN');
      this.framesSent += 1;
      this.send(c, { type: 'FEED_DATA', channel, data: [type, values] });
    }
  }

  private send(c: Connection, message: Record<string, unknown>): void {
    if (this.faults.silent || c.silent || c.ws.readyState !== c.ws.OPEN) return;
    c.lastSentAt = Date.now();
    c.ws.send(wire(message));
  }
}

type Events = Record<string, Record<string, unknown>[]>;

function collect(events: Events, type: string, event: Record<string, unknown>): void {
  const list = events[type];
  if (list === undefined) events[type] = [event];
  else list.push(event);
}

/** One event's values by field name ("NaN" where dxFeed has none). */
function eventValues(
  type: string,
  symbol: string,
  instrument: TastytradeInstrument,
  q: TastytradeQuote,
  now: number,
  first: boolean,
): Record<string, unknown> {
  const crypto = instrument.kind === 'crypto';
  const index = instrument.kind === 'index';
  const common = { eventType: type, eventSymbol: symbol };
  if (type === 'Quote')
    return {
      ...common,
      // An index quotes prices without sizes, and its times are 0: SPX as an SDK printed a live Quote
      // (tastyware/tastytrade#119: bidPrice 4835.73, bidSize NaN, bidTime 0).
      bidPrice: q.bid,
      askPrice: q.ask,
      bidSize: index ? 'NaN' : q.bidSize,
      askSize: index ? 'NaN' : q.askSize,
      // Often 0 (tastyware/tastytrade#195: "always 0" for a stock): always for indices, one quote in four otherwise.
      bidTime: index || q.tick % 4 === 0 ? 0 : now,
      askTime: index || q.tick % 4 === 0 ? 0 : now,
    };
  if (type === 'Trade')
    return {
      ...common,
      price: q.last,
      // As recorded for BTC/USD:CXTALP: no size and no day volume.
      dayVolume: crypto || index ? 'NaN' : q.volume,
      size: crypto || index || (q.tradeSize === null && !first) ? 'NaN' : (q.tradeSize ?? 100),
      time: now,
    };
  return { ...common, prevDayClosePrice: q.previousClose, dayOpenPrice: q.open, openInterest: 'NaN' };
}

/** Numbers past 10^7 in the exponent form the recorded frames show ("1.3743299E7"); whole numbers with ".0". */
function wire(message: Record<string, unknown>): string {
  const text = JSON.stringify(message);
  if (message.type !== 'FEED_DATA') return text;
  return text.replace(/(?<=[,[])(-?\d+(?:\.\d+)?)(?=[,\]])/g, (n) => {
    const value = Number(n);
    if (Math.abs(value) >= 1e7) return value.toExponential().replace('e+', 'E');
    return Number.isInteger(value) ? `${value}.0` : n;
  });
}

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
