// IBKR's real-time quotes over the Client Portal websocket (wss://<gateway>/v1/api/ws), as a
// BrokerQuoteStream. Before each connection the brokerage session is made ready (recovered once if lost,
// /iserver/accounts read) and POST /tickle gives the session value and cookies: the upgrade carries the
// cookies, and the session value answers a "waiting for session". Once the status says authenticated,
// every wanted conid is subscribed with `smd`; each frame's fields are merged into its conid's state.
//
// The socket is kept honest: `tic` at least once a minute; the server's heartbeat watched (15 s of silence
// is reported as disconnected, 25 s replaces the socket); every subscription requested again every 9 minutes, because IBKR ends them
// silently after 10 (15 by its support) while the heartbeat goes on; and a conid whose updates stop while
// its market is open is requested again after a few of its usual gaps (doubling while it stays silent),
// since re-sending `smd` is cheap and harmless. Every failure reconnects with exponential back-off and
// jitter; a subscription does not survive a reconnect, so all are sent again.
//
// The socket's lifecycle (connection, authorisation deadline, heartbeat watch, back-off, idleness) is
// FeedSocket's (../feed-socket.ts), shared with Tastytrade's feed; this file is IBKR's protocol.
import type { Logger } from 'pino';
import type { BrokerQuoteStream } from '../../broker/quote-stream.js';
import { ApiError } from '../../core/errors.js';
import { inExtendedSession } from '../../core/us-market-time.js';
import { SessionRefusedError } from './ibkr-gateway.js';
import { type FeedAddress, type FeedFailure, FeedSocket, type FeedTimings } from '../feed-socket.js';
import type { OutboundProxy } from '../outbound-proxy.js';
import { FeedQuoteStream } from '../feed-quote-stream.js';
import { QUOTE_FIELDS } from './parse-snapshot.js';
import { mergeFields, parseStreamMessage, type StreamMessage, streamedQuote } from './parse-stream-message.js';

/** What the socket needs from the REST side of the gateway. */
export interface IbkrStreamSession {
  /**
   * A ready brokerage session: POST /tickle's session value, and the cookies the gateway set. `verify`:
   * the last socket was refused for want of a session, so a data call must show the session serves data
   * (the tickle can claim a session the data calls refuse).
   */
  streamSession(options?: { verify?: boolean }): Promise<{ session: string; cookies: string | undefined }>;
  /** The conid of a symbol, or null when the gateway knows no such symbol. */
  conid(symbol: string): Promise<number | null>;
}

export interface IbkrQuoteStreamOptions extends FeedTimings {
  /** The gateway's REST base (…/v1/api); the socket is its /ws. */
  url: string;
  tlsVerify: boolean;
  session: IbkrStreamSession;
  logger: Logger;
  /** The proxy the gateway's websocket is reached through, if any (PROXY_ALSO_FOR); direct when not given. */
  outbound?: OutboundProxy;
  /** `tic` period: IBKR wants one at least once a minute. */
  ticMs?: number;
  /**
   * The server sends a heartbeat every 10 s (recorded: 10 s ± 30 ms). After `heartbeatStaleMs` without one the
   * stream is reported disconnected (its quotes then come from snapshots); after `heartbeatTimeoutMs` the
   * socket is replaced.
   */
  heartbeatStaleMs?: number;
  heartbeatTimeoutMs?: number;
  /** Every subscription is requested again this often (IBKR ends them after 10 minutes). */
  resubscribeMs?: number;
  /** A silent conid is requested again after this many of its usual gaps, and never sooner than `minMs`. */
  stall?: { gaps: number; minMs: number };
  /** Whether a symbol's market is open now (US hours, pre- and post-market included, by default). */
  marketOpen?: (now: number) => boolean;
  /** A failed conid lookup (the gateway down or paced) is tried again after this long. */
  lookupRetryMs?: number;
}

interface ConidState {
  conid: number;
  symbols: Set<string>;
  fields: Record<string, unknown> | undefined;
  /** The time of its last tick. */
  tickAt: number;
  /** When `smd` was last sent for it on this socket (0: not yet). */
  requestedAt: number;
  /** When its last frame arrived, and the typical gap between its frames. */
  receivedAt: number | undefined;
  gapMs: number | undefined;
  /** `smd` sent again since its last frame because it went silent. */
  stallRequests: number;
}

const GAP_WEIGHT = 0.2;
/** A conid lookup failed (not: the symbol is unknown): it is tried again after `lookupRetryMs`. */
const RETRY = 'retry';
/** Only IBKR's TLS codes: its own advice (IBKR_TLS_VERIFY) rather than the outbound proxy's. */
const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/;

export class IbkrQuoteStream extends FeedQuoteStream implements BrokerQuoteStream {
  readonly broker = 'ibkr' as const;
  private readonly wsUrl: string;
  /** Each wanted symbol's conid: a number, null (the gateway knows no such symbol), a lookup under way, or RETRY. */
  private readonly wanted = new Map<string, number | null | Promise<unknown> | typeof RETRY>();
  private lookupsRetriedAt = 0;
  private readonly conids = new Map<number, ConidState>();
  protected readonly link: FeedSocket;
  /** The session value of the socket being opened: the answer to "waiting for session". */
  private session = '';
  /** The last socket was refused for want of a brokerage session: the next one has the session verified first. */
  private sessionDoubted = false;
  private readonly options: Required<
    Omit<IbkrQuoteStreamOptions, 'url' | 'tlsVerify' | 'session' | 'logger' | 'outbound' | keyof FeedTimings>
  > &
    IbkrQuoteStreamOptions;

  constructor(options: IbkrQuoteStreamOptions) {
    super(options.logger);
    this.options = {
      ticMs: 50_000,
      heartbeatStaleMs: 15_000,
      heartbeatTimeoutMs: 25_000,
      resubscribeMs: 540_000,
      stall: { gaps: 8, minMs: 3_000 },
      marketOpen: inExtendedSession,
      lookupRetryMs: 10_000,
      ...options,
    };
    const url = new URL(`${options.url.replace(/\/+$/, '')}/ws`);
    url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
    this.wsUrl = url.toString();
    const { heartbeatStaleMs, heartbeatTimeoutMs } = this.options;
    this.link = new FeedSocket(
      {
        wanted: () => this.wanted.size > 0,
        prepare: () => this.prepare(),
        frame: (text) => this.handle(parseStreamMessage(text)),
        watch: (now) => this.watch(now),
        closed: (code, authorised) => this.closedAtConnect(code, authorised),
        socketError: (error) =>
          TLS_CODES.test(error.code ?? error.message)
            ? "the IBKR gateway's TLS certificate was refused: set IBKR_TLS_VERIFY=false for its self-signed certificate"
            : undefined,
        dropped: (unauthenticated) => this.dropped(unauthenticated),
      },
      {
        broker: 'ibkr',
        logger: options.logger,
        outbound: options.outbound,
        words: {
          socket: 'the IBKR websocket',
          server: 'the IBKR gateway',
          notAuthorised: 'the IBKR websocket was not authorised in time',
          silent: (seconds) => `no heartbeat from the IBKR websocket for ${seconds} s`,
          lost: 'IBKR websocket lost; reconnecting',
        },
        timings: options,
        silence: () => ({ staleMs: heartbeatStaleMs, deadMs: heartbeatTimeoutMs }),
      },
    );
  }

  subscribe(symbols: readonly string[]): void {
    for (const symbol of symbols) if (!this.wanted.has(symbol)) this.lookUp(symbol);
    this.link.subscribed();
  }

  unsubscribe(symbols: readonly string[]): void {
    for (const symbol of symbols) {
      const conid = this.wanted.get(symbol);
      this.wanted.delete(symbol);
      this.updates.forget(symbol);
      if (typeof conid !== 'number') continue;
      const state = this.conids.get(conid);
      state?.symbols.delete(symbol);
      if (state !== undefined && state.symbols.size === 0) {
        this.conids.delete(conid);
        if (this.link.authorised) this.link.send(`umd+${conid}+{}`);
      }
    }
    this.link.unsubscribed();
  }

  protected subscriptions(): number {
    let subscriptions = 0;
    for (const state of this.conids.values()) if (state.requestedAt > 0) subscriptions += 1;
    return subscriptions;
  }

  /** The symbol's conid, looked up (a failed lookup, the gateway down, is tried again by `watch`). */
  private lookUp(symbol: string): void {
    const lookup = this.options.session.conid(symbol).then(
      (conid) => ({ conid }),
      (error: unknown) => ({ error }),
    );
    this.wanted.set(symbol, lookup);
    void lookup.then((result) => {
      // Unsubscribed (or subscribed anew) while its conid was looked up.
      if (this.wanted.get(symbol) !== lookup) return;
      if ('conid' in result) return this.resolved(symbol, result.conid);
      this.wanted.set(symbol, RETRY);
      this.options.logger.debug(
        { upstream: 'ibkr', symbol, code: (result.error as { code?: string }).code },
        'IBKR stream: conid lookup failed',
      );
    });
  }

  private resolved(symbol: string, conid: number | null): void {
    this.wanted.set(symbol, conid);
    if (conid === null) return;
    let state = this.conids.get(conid);
    if (state === undefined) {
      state = {
        conid,
        symbols: new Set(),
        fields: undefined,
        tickAt: 0,
        requestedAt: 0,
        receivedAt: undefined,
        gapMs: undefined,
        stallRequests: 0,
      };
      this.conids.set(conid, state);
    }
    state.symbols.add(symbol);
    if (this.link.authorised && state.requestedAt === 0) this.request(state);
    // A second symbol for a conid already streaming (two spellings of one listing) has its quote at once.
    else if (state.fields !== undefined) this.emit(state, symbol);
  }

  /** A ready brokerage session, its cookies for the upgrade; or why there is none. */
  private async prepare(): Promise<FeedAddress | FeedFailure> {
    try {
      const { session, cookies } = await this.options.session.streamSession({ verify: this.sessionDoubted });
      this.sessionDoubted = false;
      this.session = session;
      return {
        url: this.wsUrl,
        // The same rule as REST: the gateway's self-signed certificate is accepted only when IBKR_TLS_VERIFY is off.
        rejectUnauthorized: this.options.tlsVerify,
        headers: cookies === undefined ? {} : { cookie: cookies },
      };
    } catch (error) {
      // A session refused after its mending (ibkr-gateway.ts, by the refusal's meaning) is the brokerage
      // session's state; anything else is the gateway's reachability.
      const apiError = error instanceof ApiError ? error : undefined;
      return {
        failure: apiError?.message ?? 'the IBKR gateway could not be reached',
        unauthenticated: error instanceof SessionRefusedError,
      };
    }
  }

  /** A close before authorisation with 1000 is the gateway's way of saying there is no brokerage session. */
  private closedAtConnect(code: number, authorised: boolean): string | undefined {
    if (authorised || code !== 1000) return undefined;
    this.sessionDoubted = true;
    return 'the IBKR gateway closed the websocket at once (code 1000): no brokerage session, or its nightly maintenance';
  }

  private handle(message: StreamMessage): void {
    const now = Date.now();
    switch (message.kind) {
      case 'waiting-for-session':
        this.link.send(JSON.stringify({ session: this.session }));
        return;
      case 'status':
        if (message.authenticated === true && !this.link.authorised) this.authorise();
        else if (message.authenticated === false) this.link.lost('the IBKR brokerage session is not authenticated', true, 1000);
        return;
      case 'heartbeat':
        this.link.heard();
        return;
      case 'market-data':
        return this.marketData(message, now);
      case 'error':
        this.link.report(`the IBKR websocket reported an error: ${message.message.slice(0, 120)}`);
        return;
      case 'unreadable':
        this.options.logger.warn({ upstream: 'ibkr', reason: message.reason }, 'IBKR websocket message unreadable');
        return;
      default:
        return;
    }
  }

  private authorise(): void {
    this.link.authorise();
    this.link.every(this.options.ticMs, () => this.link.send('tic'));
    for (const state of this.conids.values()) this.request(state);
    this.options.logger.info({ upstream: 'ibkr', conids: this.conids.size }, 'IBKR websocket connected');
  }

  private marketData(message: Extract<StreamMessage, { kind: 'market-data' }>, now: number): void {
    const state = this.conids.get(message.conid);
    if (state === undefined) return;
    if (state.receivedAt !== undefined) {
      const gap = now - state.receivedAt;
      state.gapMs = state.gapMs === undefined ? gap : state.gapMs * (1 - GAP_WEIGHT) + gap * GAP_WEIGHT;
    }
    state.receivedAt = now;
    state.stallRequests = 0;
    this.link.ticked(now);
    state.fields = mergeFields(state.fields, message.fields);
    state.tickAt = message.updatedAt ?? now;
    for (const symbol of state.symbols) this.emit(state, symbol);
  }

  private emit(state: ConidState, symbol: string): void {
    // A first frame without any market field (as recorded) is no quote yet: QuoteUpdates skips it.
    if (state.fields !== undefined)
      this.updates.publish(symbol, streamedQuote(symbol, state.conid, state.fields, state.tickAt), state.tickAt);
  }

  private request(state: ConidState): void {
    state.requestedAt = Date.now();
    this.link.send(`smd+${state.conid}+${JSON.stringify({ fields: QUOTE_FIELDS })}`);
  }

  /** Failed lookups again; then, on an authorised socket, renewals every 9 minutes and silent symbols in open markets. */
  private watch(now: number): void {
    if (now - this.lookupsRetriedAt >= this.options.lookupRetryMs) {
      this.lookupsRetriedAt = now;
      for (const [symbol, conid] of this.wanted) if (conid === RETRY) this.lookUp(symbol);
    }
    if (!this.link.authorised) return;
    const open = this.options.marketOpen(now);
    for (const state of this.conids.values()) {
      if (state.requestedAt === 0) continue;
      if (now - state.requestedAt >= this.options.resubscribeMs) {
        this.request(state);
        continue;
      }
      if (!open || state.gapMs === undefined || state.receivedAt === undefined) continue;
      const { gaps, minMs } = this.options.stall;
      const silentFor = now - Math.max(state.receivedAt, state.requestedAt);
      const patience = Math.min(Math.max(minMs, state.gapMs * gaps), this.options.resubscribeMs) * 2 ** state.stallRequests;
      if (silentFor > patience) {
        state.stallRequests += 1;
        this.request(state);
      }
    }
  }

  /** The socket is gone: no subscription survives it. */
  private dropped(unauthenticated: boolean): void {
    if (unauthenticated) this.sessionDoubted = true;
    for (const state of this.conids.values()) {
      state.requestedAt = 0;
      state.stallRequests = 0;
    }
  }
}
