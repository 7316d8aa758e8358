// One broker feed's socket from its connection to its end, the same for both feeds (IBKR's Client Portal
// websocket, Tastytrade's DXLink): the credentials asked for before each connection, the upgrade through the
// outbound proxy, the deadline for the authorisation, the watch (an idle socket closed, a silent server
// reported then replaced, the protocol's own renewals), every loss reconnected with back-off and jitter, and
// the status all that gives. The feed keeps only its protocol (frames, subscriptions, tokens): it says when
// the socket is authorised, when the server was heard, and when a frame means the socket is lost.
//
// It lives in upstreams/, not broker/, because it opens the socket the outbound proxy's way (outbound-proxy.ts).
import type { Logger } from 'pino';
import WebSocket from 'ws';
import { discardSocket } from '../broker/discard-socket.js';
import type { QuoteStreamState, QuoteStreamStatus } from '../broker/quote-stream.js';
import { ReconnectSchedule } from '../broker/reconnect-schedule.js';
import type { BrokerKind } from '../core/config.js';
import { OutboundProxy, socketProblem } from './outbound-proxy.js';

/** Where the next socket goes, and what its upgrade carries. */
export interface FeedAddress {
  url: string;
  headers?: Record<string, string>;
  /** Off only where the operator accepts a self-signed certificate (IBKR_TLS_VERIFY=false). */
  rejectUnauthorized?: boolean;
}

/** Why no socket can be opened now, in words for status; `unauthenticated` when the broker refused the credentials. */
export interface FeedFailure {
  failure: string;
  unauthenticated: boolean;
}

/** What a feed's protocol gives the lifecycle. */
export interface FeedProtocol {
  /** Whether any symbol is wanted: a socket is opened, and kept, only then. */
  wanted(): boolean;
  /** Before each connection: the credentials (a session, a token) and the address, or why there are none. Never rejects. */
  prepare(): Promise<FeedAddress | FeedFailure>;
  /** The socket opened: the protocol's first words (the authorisation must follow within `authTimeoutMs`). */
  opened?(): void;
  /** A text frame from the current socket. */
  frame(text: string): void;
  /** Every watch round, after the lifecycle's own checks: the protocol's keepalives, renewals and retries. */
  watch?(now: number): void;
  /** Words for a close the protocol reads its own way; undefined: "<socket> closed (code N)". */
  closed?(code: number, authorised: boolean): string | undefined;
  /** Words for a socket error the protocol knows better; undefined: the outbound proxy's reading (socketProblem). */
  socketError?(error: Error & { code?: string }): string | undefined;
  /** The socket was given up (lost, idle or closed): its subscriptions are gone with it. */
  dropped?(unauthenticated: boolean): void;
}

/** The lifecycle's timings, as each feed's options offer them (tests shorten them; the defaults are production's). */
export interface FeedTimings {
  /** From the socket's opening to its authorisation (IBKR's authenticated status, DXLink's open feed channel); the upgrade's own timeout too. */
  authTimeoutMs?: number;
  /** Back-off between connection attempts: doubles from the first to the cap, with jitter. */
  backOffMs?: { first: number; max: number };
  /** How often idleness, silence and the protocol's timers (renewals, keepalives, stalls) are looked at. */
  watchMs?: number;
  /** A socket with nothing subscribed is closed after this long. */
  idleMs?: number;
}

/** The timings given, production's defaults for the others. */
function timingsOf(given: FeedTimings): Required<FeedTimings> {
  return {
    authTimeoutMs: given.authTimeoutMs ?? 10_000,
    backOffMs: given.backOffMs ?? { first: 1_000, max: 30_000 },
    watchMs: given.watchMs ?? 1_000,
    idleMs: given.idleMs ?? 30_000,
  };
}

export interface FeedSocketOptions {
  broker: BrokerKind;
  /** The feed's options, whose timings the lifecycle reads (the defaults for those not given). */
  timings: FeedTimings;
  logger: Logger;
  /** How status and logs name things. */
  words: {
    /** The socket: "the IBKR websocket". */
    socket: string;
    /** Who answers the upgrade: "the IBKR gateway". */
    server: string;
    /** The socket opened but was not authorised in time. */
    notAuthorised: string;
    /** The server said nothing for `seconds`. */
    silent: (seconds: number) => string;
    /** The log line of a loss. */
    lost: string;
  };
  /** How long an authorised socket's server may be silent: past `staleMs` it is reported disconnected, past `deadMs` replaced. */
  silence: () => { staleMs: number; deadMs: number };
  /** A renewal is not begun again sooner than this after the last one began. */
  renewRetryMs?: number;
  /** The jitter's source (tests fix it). */
  random?: () => number;
  /** The proxy the socket's address is reached through, if any; direct when not given. */
  outbound?: OutboundProxy;
}

export class FeedSocket {
  private readonly reconnect: ReconnectSchedule;
  private socket: WebSocket | undefined;
  private isAuthorised = false;
  private state: QuoteStreamState = 'off';
  private started = false;
  private closed = false;
  private lastError: string | null = null;
  private lastTickAt: number | undefined;
  private heardAt = 0;
  private sentAt = 0;
  private idleSince: number | undefined;
  private connecting: Promise<void> | undefined;
  private renewing: Promise<void> | undefined;
  private renewTriedAt = -Infinity;
  private watchTimer: NodeJS.Timeout | undefined;
  private authTimer: NodeJS.Timeout | undefined;
  /** The protocol's timers for this socket (`every`), cleared with it. */
  private socketTimers: NodeJS.Timeout[] = [];

  private readonly options: FeedSocketOptions & Required<FeedTimings>;

  constructor(
    private readonly protocol: FeedProtocol,
    options: FeedSocketOptions,
  ) {
    this.options = { ...options, ...timingsOf(options.timings) };
    this.reconnect = new ReconnectSchedule(this.options.backOffMs, options.random);
  }

  /** The socket is open and the broker accepted it: subscriptions may be sent. */
  get authorised(): boolean {
    return this.isAuthorised;
  }

  /** When something was last sent on the socket (a keepalive is due after a quiet spell). */
  get lastSentAt(): number {
    return this.sentAt;
  }

  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.state = 'disconnected';
    this.watchTimer = setInterval(() => this.watch(), this.options.watchMs);
    this.watchTimer.unref();
    if (this.protocol.wanted()) this.connect();
  }

  /** Symbols were added: the idle clock stops, and a socket is opened if there is none (nor one due). */
  subscribed(): void {
    if (this.protocol.wanted()) this.idleSince = undefined;
    if (this.started && this.socket === undefined && !this.reconnect.pending) this.connect();
  }

  /** Symbols were removed: with none left, the idle clock starts. */
  unsubscribed(): void {
    if (!this.protocol.wanted()) this.idleSince ??= Date.now();
  }

  /** The protocol's authorisation completed: connected, and the back-off starts again from its first step. */
  authorise(): void {
    clearTimeout(this.authTimer);
    this.isAuthorised = true;
    this.state = 'connected';
    this.reconnect.succeeded();
    this.lastError = null;
    this.heardAt = Date.now();
  }

  /** The server was heard (its heartbeat, or any frame, as the protocol counts it): the silence watch starts again. */
  heard(): void {
    this.heardAt = Date.now();
  }

  /** A tick arrived at `at`: status's lastTickAgeMs. */
  ticked(at: number): void {
    this.lastTickAt = at;
  }

  /** An error the broker reported without ending the socket, for status. */
  report(reason: string): void {
    this.lastError = reason;
  }

  /** Sends on the socket when it is open; otherwise nothing (a reconnection sends everything again). */
  send(text: string): void {
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    this.sentAt = Date.now();
    this.socket.send(text);
  }

  /** `action` every `ms` while this socket lasts (IBKR's `tic`): cleared when it is dropped. */
  every(ms: number, action: () => void): void {
    this.socketTimers.push(setInterval(action, ms));
  }

  /**
   * A renewal on the open socket (a new token, say): one at a time, not begun again within `renewRetryMs`,
   * awaited by close(). `current` says whether the socket it began on is still the authorised one.
   */
  renew(work: (current: () => boolean) => Promise<void>): void {
    const now = Date.now();
    if (this.renewing !== undefined || now - this.renewTriedAt <= (this.options.renewRetryMs ?? 60_000)) return;
    this.renewTriedAt = now;
    const socket = this.socket;
    this.renewing = work(() => this.socket === socket && this.isAuthorised)
      .catch((error: unknown) => {
        this.options.logger.warn({ upstream: this.options.broker, code: (error as { code?: string }).code }, 'feed renewal failed');
      })
      .finally(() => {
        this.renewing = undefined;
      });
  }

  /** The protocol says the socket is done (a refused token, an error frame): closed, with `code` when it is open, and connected again after the back-off. */
  lost(reason: string, unauthenticated = false, code?: number): void {
    if (this.socket !== undefined) this.lose(this.socket, reason, unauthenticated, code);
  }

  status(subscriptions: number): QuoteStreamStatus {
    const now = Date.now();
    // A socket whose server went quiet is dead before the watch replaces it: said so at once.
    const silentMs = now - this.heardAt;
    const silent = this.isAuthorised && silentMs > this.options.silence().staleMs;
    return {
      broker: this.options.broker,
      state: silent ? 'disconnected' : this.state,
      subscriptions: this.isAuthorised ? subscriptions : 0,
      lastTickAgeMs: this.lastTickAt === undefined ? null : now - this.lastTickAt,
      reconnects: this.reconnect.reconnects,
      lastError: silent ? this.options.words.silent(Math.round(silentMs / 1000)) : this.lastError,
    };
  }

  /** Stops for good: the socket closed (1000), no reconnection, every timer cleared; resolves once nothing is under way. */
  async close(): Promise<void> {
    this.closed = true;
    this.state = 'off';
    clearInterval(this.watchTimer);
    this.reconnect.cancel();
    this.drop(1000, false);
    await this.connecting?.catch(() => {});
    await this.renewing;
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
    const address = await this.protocol
      .prepare()
      .catch((): FeedFailure => ({ failure: `${this.options.words.server} could not be reached`, unauthenticated: false }));
    if ('failure' in address) return this.failed(address.failure, address.unauthenticated);
    if (this.closed || !this.protocol.wanted()) {
      this.state = this.closed ? 'off' : 'disconnected';
      return;
    }
    const { url, headers = {}, rejectUnauthorized } = address;
    const socket = new WebSocket(url, {
      headers,
      ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
      handshakeTimeout: this.options.authTimeoutMs,
      perMessageDeflate: false,
      agent: (this.options.outbound ?? OutboundProxy.DIRECT).agentFor(url),
    });
    this.socket = socket;
    this.isAuthorised = false;
    this.listen(socket);
  }

  private listen(socket: WebSocket): void {
    const { words } = this.options;
    socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      this.lose(socket, `${words.server} refused the websocket (HTTP ${status})`, status === 401);
    });
    socket.on('open', () => {
      if (this.socket !== socket) return;
      this.authTimer = setTimeout(() => this.lose(socket, words.notAuthorised), this.options.authTimeoutMs);
      this.protocol.opened?.();
    });
    socket.on('message', (data, isBinary) => {
      if (!isBinary && this.socket === socket) this.protocol.frame(data.toString());
    });
    socket.on('close', (code) => {
      if (this.socket !== socket) return;
      this.lose(socket, this.protocol.closed?.(code, this.isAuthorised) ?? `${words.socket} closed (code ${code})`);
    });
    socket.on('error', (error: Error & { code?: string }) => {
      if (this.socket === socket) this.lose(socket, this.protocol.socketError?.(error) ?? socketProblem(words.socket, error));
    });
  }

  /** An idle socket closed; an authorised one silent too long replaced; then the protocol's own round. */
  private watch(): void {
    const now = Date.now();
    if (
      this.socket !== undefined &&
      !this.protocol.wanted() &&
      this.idleSince !== undefined &&
      now - this.idleSince > this.options.idleMs
    ) {
      this.drop(1000, false);
      this.state = 'disconnected';
    } else if (this.isAuthorised && now - this.heardAt > this.options.silence().deadMs) {
      this.lost(this.options.words.silent(Math.round((now - this.heardAt) / 1000)));
    }
    this.protocol.watch?.(now);
  }

  /** `socket` is gone or useless: close it and try again after the back-off. */
  private lose(socket: WebSocket, reason: string, unauthenticated = false, code?: number): void {
    if (socket !== this.socket) return;
    this.drop(code, unauthenticated);
    this.failed(reason, unauthenticated);
  }

  private failed(reason: string, unauthenticated: boolean): void {
    this.lastError = reason;
    if (this.closed) return;
    this.state = unauthenticated ? 'unauthenticated' : 'disconnected';
    this.options.logger.warn({ upstream: this.options.broker, reason, attempt: this.reconnect.attempts }, this.options.words.lost);
    this.reconnect.after(() => {
      if (this.protocol.wanted()) this.connect();
    });
  }

  private drop(code: number | undefined, unauthenticated: boolean): void {
    clearTimeout(this.authTimer);
    for (const timer of this.socketTimers) clearInterval(timer);
    this.socketTimers = [];
    const socket = this.socket;
    this.socket = undefined;
    this.isAuthorised = false;
    this.protocol.dropped?.(unauthenticated);
    if (socket !== undefined) discardSocket(socket, code);
  }
}
