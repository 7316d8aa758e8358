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
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { StreamedQuote, BrokerQuoteStream, QuoteStreamState, QuoteStreamStatus } from '../../broker/quote-stream.js';
import { QuoteUpdates } from '../../broker/quote-updates.js';
import { discardSocket } from '../../broker/discard-socket.js';
import { ReconnectSchedule } from '../../broker/reconnect-schedule.js';
import { ApiError } from '../../core/errors.js';
import { inExtendedSession } from '../../core/us-market-time.js';
import { SessionRefusedError } from './ibkr-gateway.js';
import { proxyAgentFor, socketProblem } from '../outbound-proxy.js';
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

export interface IbkrQuoteStreamOptions {
  /** The gateway's REST base (…/v1/api); the socket is its /ws. */
  url: string;
  tlsVerify: boolean;
  session: IbkrStreamSession;
  logger: Logger;
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
  /** An open socket not authenticated within this time is closed. */
  authTimeoutMs?: number;
  /** Back-off between connection attempts: doubles from the first to the cap, with jitter. */
  backOffMs?: { first: number; max: number };
  /** A silent conid is requested again after this many of its usual gaps, and never sooner than `minMs`. */
  stall?: { gaps: number; minMs: number };
  /** How often the heartbeat, the renewals and the stalls are looked at. */
  watchMs?: number;
  /** Whether a symbol's market is open now (US hours, pre- and post-market included, by default). */
  marketOpen?: (now: number) => boolean;
  /** A socket with nothing subscribed is closed after this long. */
  idleMs?: number;
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

export class IbkrQuoteStream implements BrokerQuoteStream {
  readonly broker = 'ibkr' as const;
  private readonly wsUrl: string;
  /** Each wanted symbol's conid: a number, null (the gateway knows no such symbol), a lookup under way, or RETRY. */
  private readonly wanted = new Map<string, number | null | Promise<unknown> | typeof RETRY>();
  private lookupsRetriedAt = 0;
  private readonly conids = new Map<number, ConidState>();
  private readonly updates: QuoteUpdates;
  private readonly reconnect: ReconnectSchedule;
  private socket: WebSocket | undefined;
  private authorised = false;
  /** The last socket was refused for want of a brokerage session: the next one has the session verified first. */
  private sessionDoubted = false;
  private state: QuoteStreamState = 'off';
  private started = false;
  private closed = false;
  private lastError: string | null = null;
  private lastTickAt: number | undefined;
  private lastHeartbeatAt = 0;
  private idleSince: number | undefined;
  private connecting: Promise<void> | undefined;
  private ticTimer: NodeJS.Timeout | undefined;
  private watchTimer: NodeJS.Timeout | undefined;
  private authTimer: NodeJS.Timeout | undefined;
  private readonly options: Required<Omit<IbkrQuoteStreamOptions, 'url' | 'tlsVerify' | 'session' | 'logger'>> & IbkrQuoteStreamOptions;

  constructor(options: IbkrQuoteStreamOptions) {
    this.options = {
      ticMs: 50_000,
      heartbeatStaleMs: 15_000,
      heartbeatTimeoutMs: 25_000,
      resubscribeMs: 540_000,
      authTimeoutMs: 10_000,
      backOffMs: { first: 1_000, max: 30_000 },
      stall: { gaps: 8, minMs: 3_000 },
      watchMs: 1_000,
      marketOpen: inExtendedSession,
      idleMs: 30_000,
      lookupRetryMs: 10_000,
      ...options,
    };
    this.updates = new QuoteUpdates(options.logger);
    this.reconnect = new ReconnectSchedule(this.options.backOffMs);
    const url = new URL(`${options.url.replace(/\/+$/, '')}/ws`);
    url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
    this.wsUrl = url.toString();
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
    for (const symbol of symbols) if (!this.wanted.has(symbol)) this.lookUp(symbol);
    if (this.wanted.size > 0) this.idleSince = undefined;
    if (this.started && this.socket === undefined && !this.reconnect.pending) this.connect();
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
        if (this.authorised) this.sendText(`umd+${conid}+{}`);
      }
    }
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
    let subscriptions = 0;
    if (this.authorised) for (const state of this.conids.values()) if (state.requestedAt > 0) subscriptions += 1;
    // A socket whose heartbeat stopped is dead before the timeout replaces it: said so at once.
    const silentMs = now - this.lastHeartbeatAt;
    const silent = this.authorised && silentMs > this.options.heartbeatStaleMs;
    return {
      broker: 'ibkr',
      state: silent ? 'disconnected' : this.state,
      subscriptions,
      lastTickAgeMs: this.lastTickAt === undefined ? null : now - this.lastTickAt,
      reconnects: this.reconnect.reconnects,
      lastError: silent ? `no heartbeat from the IBKR websocket for ${Math.round(silentMs / 1000)} s` : this.lastError,
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
    if (this.authorised && state.requestedAt === 0) this.request(state);
    // A second symbol for a conid already streaming (two spellings of one listing) has its quote at once.
    else if (state.fields !== undefined) this.emit(state, symbol);
  }

  private connect(): void {
    if (this.closed || this.connecting !== undefined || this.socket !== undefined) return;
    this.reconnect.cancel();
    this.state = 'connecting';
    this.connecting = this.open().finally(() => {
      this.connecting = undefined;
    });
  }

  private async open(): Promise<void> {
    let session: { session: string; cookies: string | undefined };
    try {
      session = await this.options.session.streamSession({ verify: this.sessionDoubted });
      this.sessionDoubted = false;
    } catch (error) {
      // A session refused after its mending (ibkr-gateway.ts, by the refusal's meaning) is the brokerage
      // session's state; anything else is the gateway's reachability.
      const apiError = error instanceof ApiError ? error : undefined;
      this.failed(apiError?.message ?? 'the IBKR gateway could not be reached', error instanceof SessionRefusedError);
      return;
    }
    if (this.closed || this.wanted.size === 0) {
      this.state = this.closed ? 'off' : 'disconnected';
      return;
    }
    const socket = new WebSocket(this.wsUrl, {
      // The same rule as REST: the gateway's self-signed certificate is accepted only when IBKR_TLS_VERIFY is off.
      rejectUnauthorized: this.options.tlsVerify,
      headers: session.cookies === undefined ? {} : { cookie: session.cookies },
      handshakeTimeout: this.options.authTimeoutMs,
      perMessageDeflate: false,
      agent: proxyAgentFor(this.wsUrl),
    });
    this.socket = socket;
    this.authorised = false;
    socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      this.lost(socket, `the IBKR gateway refused the websocket (HTTP ${status})`, status === 401);
    });
    socket.on('open', () => {
      this.authTimer = setTimeout(
        () => this.lost(socket, 'the IBKR websocket was not authorised in time', false),
        this.options.authTimeoutMs,
      );
    });
    socket.on('message', (data, isBinary) => {
      if (!isBinary && this.socket === socket) this.handle(parseStreamMessage(data.toString()), session.session);
    });
    socket.on('close', (code) => {
      if (this.socket !== socket) return;
      const atConnect = !this.authorised;
      if (atConnect && code === 1000) this.sessionDoubted = true;
      this.lost(
        socket,
        atConnect && code === 1000
          ? 'the IBKR gateway closed the websocket at once (code 1000): no brokerage session, or its nightly maintenance'
          : `the IBKR websocket closed (code ${code})`,
        false,
      );
    });
    socket.on('error', (error: Error & { code?: string }) => {
      if (this.socket !== socket) return;
      const tls = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(error.code ?? error.message);
      this.lost(
        socket,
        tls
          ? "the IBKR gateway's TLS certificate was refused: set IBKR_TLS_VERIFY=false for its self-signed certificate"
          : socketProblem('the IBKR websocket', error),
        false,
      );
    });
  }

  private handle(message: StreamMessage, session: string): void {
    const now = Date.now();
    switch (message.kind) {
      case 'waiting-for-session':
        this.sendText(JSON.stringify({ session }));
        return;
      case 'status':
        if (message.authenticated === true && !this.authorised) this.authorise(now);
        else if (message.authenticated === false) this.lost(this.socket, 'the IBKR brokerage session is not authenticated', true);
        return;
      case 'heartbeat':
        this.lastHeartbeatAt = now;
        return;
      case 'market-data':
        return this.marketData(message, now);
      case 'error':
        this.lastError = `the IBKR websocket reported an error: ${message.message.slice(0, 120)}`;
        return;
      case 'unreadable':
        this.options.logger.warn({ upstream: 'ibkr', reason: message.reason }, 'IBKR websocket message unreadable');
        return;
      default:
        return;
    }
  }

  private authorise(now: number): void {
    clearTimeout(this.authTimer);
    this.authorised = true;
    this.state = 'connected';
    this.reconnect.succeeded();
    this.lastError = null;
    this.lastHeartbeatAt = now;
    this.ticTimer = setInterval(() => this.sendText('tic'), this.options.ticMs);
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
    this.lastTickAt = now;
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
    this.sendText(`smd+${state.conid}+${JSON.stringify({ fields: QUOTE_FIELDS })}`);
  }

  /** Heartbeat silence, renewals every 9 minutes, silent symbols in open markets, an idle socket. */
  private watch(): void {
    const now = Date.now();
    if (now - this.lookupsRetriedAt >= this.options.lookupRetryMs) {
      this.lookupsRetriedAt = now;
      for (const [symbol, conid] of this.wanted) if (conid === RETRY) this.lookUp(symbol);
    }
    if (this.socket !== undefined && this.wanted.size === 0 && this.idleSince !== undefined && now - this.idleSince > this.options.idleMs) {
      this.drop(1000);
      this.state = 'disconnected';
      return;
    }
    if (!this.authorised) return;
    if (now - this.lastHeartbeatAt > this.options.heartbeatTimeoutMs) {
      this.lost(this.socket, `no heartbeat from the IBKR websocket for ${Math.round((now - this.lastHeartbeatAt) / 1000)} s`, false);
      return;
    }
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

  private sendText(text: string): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(text);
  }

  /** The socket is gone or useless: close it and try again after the back-off. */
  private lost(socket: WebSocket | undefined, reason: string, unauthenticated: boolean): void {
    if (socket === undefined || socket !== this.socket) return;
    if (unauthenticated) this.sessionDoubted = true;
    this.drop(unauthenticated ? 1000 : undefined);
    this.failed(reason, unauthenticated);
  }

  private failed(reason: string, unauthenticated: boolean): void {
    this.lastError = reason;
    if (this.closed) return;
    this.state = unauthenticated ? 'unauthenticated' : 'disconnected';
    this.options.logger.warn({ upstream: 'ibkr', reason, attempt: this.reconnect.attempts }, 'IBKR websocket lost; reconnecting');
    this.reconnect.after(() => {
      if (this.wanted.size > 0) this.connect();
    });
  }

  private drop(code: number | undefined): void {
    clearTimeout(this.authTimer);
    clearInterval(this.ticTimer);
    const socket = this.socket;
    this.socket = undefined;
    this.authorised = false;
    for (const state of this.conids.values()) {
      state.requestedAt = 0;
      state.stallRequests = 0;
    }
    if (socket !== undefined) discardSocket(socket, code);
  }
}
