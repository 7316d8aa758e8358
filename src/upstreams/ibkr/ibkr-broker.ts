// The broker interface over the IBKR Client Portal Gateway: health from the auth status and the data calls
// (ibkr-session-check.ts), accounts and positions from /portfolio (accounts first, pages until a short one),
// quotes from snapshots (symbol -> conid cached for a day, a clean "not found" for an hour, any other
// failure never; /iserver/accounts once per session, and a bounded warm-up retry for the empty first
// snapshot), and a keep-alive tickle while the service runs.
import { setTimeout as sleep } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { ApiError, driftOf } from '../../core/errors.js';
import {
  type Broker,
  type BrokerAccount,
  type BrokerHealth,
  type BrokerPosition,
  type BrokerQuotes,
  emptyQuote,
} from '../../broker/broker.js';
import { HttpClient } from '../http-client.js';
import { OutboundProxy } from '../outbound-proxy.js';
import { IbkrGateway, type IbkrGatewayOptions, SessionRefusedError } from './ibkr-gateway.js';
import { parseIserverAccounts, parsePortfolioAccounts } from './parse-accounts.js';
import { IBKR_PAGE_SIZE, isLastPositionsPage, parsePositionsPage } from './parse-positions.js';
import { parseSecdefSearch, pickListing } from './parse-secdef.js';
import { parseTickle, parseTickleSession } from './parse-session.js';
import type { IbkrStreamSession } from './ibkr-quote-stream.js';
import { parseSnapshot, SNAPSHOT_FIELDS, type SnapshotRow, snapshotToQuote } from './parse-snapshot.js';
import { timedHealth } from '../../broker/timed-health.js';
import { checkIbkrSession } from './ibkr-session-check.js';

export interface IbkrBrokerOptions {
  url: string;
  tlsVerify: boolean;
  timeoutMs: number;
  logger: Logger;
  /** Keep-alive period; 0 disables it (tests that do not need it). */
  tickleIntervalMs?: number;
  /** Further snapshot calls for conids whose first snapshot came back empty. */
  warmupRetries?: number;
  warmupDelayMs?: number;
  conidTtlMs?: number;
  /** How long "no such symbol" is remembered. */
  unknownSymbolTtlMs?: number;
  /** The proxy the gateway is reached through, if any (PROXY_ALSO_FOR); direct when not given. */
  outbound?: OutboundProxy;
  /** Passed to the gateway (pacer, recovery polling). */
  gateway?: Partial<Omit<IbkrGatewayOptions, 'url' | 'http' | 'logger'>>;
}

const DAY_MS = 86_400_000;
/** Guards against a gateway that never answers an empty page. */
const MAX_PAGES = 200;
const PORTFOLIO_ACCOUNTS_REUSE_MS = 5_000;

export class IbkrBroker implements Broker, IbkrStreamSession {
  readonly kind = 'ibkr' as const;
  readonly gateway: IbkrGateway;
  /** The proxy the gateway is reached through, if any: its websocket follows the same rule. */
  readonly outbound: OutboundProxy;
  private readonly http: HttpClient;
  private readonly logger: Logger;
  private readonly conids: LRUCache<string, { conid: number | null }>;
  private readonly lookups = new Map<string, Promise<number | null>>();
  /** Conids that stayed empty through a whole warm-up (no market data permission, no quotes): not retried for a minute. */
  private readonly withoutData = new LRUCache<number, true>({ max: 20_000, ttl: 60_000 });
  private withoutDataEpoch = 0;
  private portfolioAccounts: { at: number; promise: Promise<BrokerAccount[]>; pending: boolean } | undefined;
  private primedEpoch = -1;
  private priming: Promise<void> | undefined;
  private tickleTimer: NodeJS.Timeout | undefined;
  private tickling = false;
  private closed = false;

  constructor(private readonly options: IbkrBrokerOptions) {
    this.logger = options.logger;
    this.outbound = options.outbound ?? OutboundProxy.DIRECT;
    // Verification is switched off for this client only: the gateway's certificate is self-signed.
    this.http = new HttpClient({
      name: 'IBKR gateway',
      timeoutMs: options.timeoutMs,
      logger: options.logger,
      insecureTls: !options.tlsVerify,
      outbound: this.outbound,
    });
    this.gateway = new IbkrGateway({ ...options.gateway, url: options.url, http: this.http, logger: options.logger });
    this.conids = new LRUCache({ max: 20_000, ttl: options.conidTtlMs ?? DAY_MS });
  }

  start(): void {
    const every = this.options.tickleIntervalMs ?? 60_000;
    if (every <= 0 || this.tickleTimer !== undefined || this.closed) return;
    this.tickleTimer = setInterval(() => void this.tickle(), every);
    this.tickleTimer.unref();
  }

  get keepAliveRunning(): boolean {
    return this.tickleTimer !== undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.tickleTimer !== undefined) clearInterval(this.tickleTimer);
    this.tickleTimer = undefined;
    await this.http.close();
  }

  /** Keeps the session alive and notices when it was lost silently; recovers it once if so. */
  async tickle(): Promise<void> {
    if (this.tickling) return;
    this.tickling = true;
    try {
      const answer = await this.gateway.send('/tickle', { method: 'POST', body: {} });
      if (answer.kind === 'logged_out') {
        this.logger.warn({ upstream: 'ibkr' }, 'IBKR gateway is not logged in; a person must log in in a browser');
        return;
      }
      const status = answer.kind === 'ok' ? parseTickle(answer.json) : null;
      if ((answer.kind === 'refused' && answer.meaning === 'no_session') || (status !== null && !status.authenticated)) {
        this.logger.warn({ upstream: 'ibkr' }, 'IBKR brokerage session lost; trying to recover it');
        await this.gateway.recover(status?.established ? 'not_authenticated' : 'no_session');
      }
    } catch (error) {
      // Nothing records the keep-alive's calls; an answer it cannot read is worth a warning at least.
      const drift = driftOf(error);
      if (drift !== undefined) this.logger.warn({ upstream: 'ibkr', drift }, 'IBKR keep-alive answer unreadable');
      else this.logger.debug({ upstream: 'ibkr', code: (error as { code?: string }).code }, 'IBKR keep-alive failed');
    } finally {
      this.tickling = false;
    }
  }

  health(): Promise<BrokerHealth> {
    return timedHealth(
      'ibkr',
      () =>
        checkIbkrSession(this.gateway, {
          due: () => this.primedEpoch !== this.gateway.epoch || this.gateway.dataRefused,
          run: () => this.primeBrokerageAccounts(this.gateway.dataRefused),
        }),
      this.outbound.proxyFor(this.options.url)?.address,
    );
  }

  /** `fresh`: read the list again (the gateway forgot it), sharing a read already on its way. */
  accounts(fresh = false): Promise<BrokerAccount[]> {
    // /portfolio/accounts is paced at one call per 5 s; it also has to precede every /portfolio read.
    const now = Date.now();
    const memo = this.portfolioAccounts;
    if (memo !== undefined && (memo.pending || (!fresh && now - memo.at < PORTFOLIO_ACCOUNTS_REUSE_MS))) return memo.promise;
    const promise = this.gateway.call('/portfolio/accounts', parsePortfolioAccounts);
    const next = { at: now, promise, pending: true };
    this.portfolioAccounts = next;
    promise.then(
      () => {
        next.pending = false;
      },
      () => {
        if (this.portfolioAccounts === next) this.portfolioAccounts = undefined;
      },
    );
    return promise;
  }

  async positions(): Promise<BrokerPosition[]> {
    const accounts = await this.accounts();
    const perAccount = await Promise.all(accounts.map((account) => this.accountPositions(account.accountId)));
    return perAccount.flat();
  }

  private async accountPositions(accountId: string): Promise<BrokerPosition[]> {
    const positions: BrokerPosition[] = [];
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const { rows, last } = await this.gateway.call(
        `/portfolio/${encodeURIComponent(accountId)}/positions/${page}`,
        (json) => ({ rows: parsePositionsPage(json, accountId, Date.now()), last: isLastPositionsPage(json) }),
        // A gateway that forgot the account list (a restart, a reset) asks for it again first.
        { prepare: async (force) => void (force ? await this.accounts(true) : undefined) },
      );
      positions.push(...rows);
      if (last) return positions;
      if (rows.length > IBKR_PAGE_SIZE)
        this.logger.debug({ upstream: 'ibkr', page, size: rows.length }, 'IBKR positions page larger than documented');
    }
    throw new ApiError('UPSTREAM_ERROR', `the IBKR gateway returned more than ${MAX_PAGES} pages of positions`);
  }

  async quotes(symbols: string[]): Promise<BrokerQuotes> {
    const resolved = await Promise.all(symbols.map(async (symbol) => ({ symbol, conid: await this.conidFor(symbol) })));
    const missing = resolved.filter((r) => r.conid === null).map((r) => r.symbol);
    const known = resolved.filter((r): r is { symbol: string; conid: number } => r.conid !== null);
    const rows =
      known.length === 0 ? new Map<number, SnapshotRow>() : await this.snapshotWithWarmup([...new Set(known.map((r) => r.conid))]);
    const quotes: BrokerQuotes['quotes'] = {};
    const receivedAt = Date.now();
    for (const { symbol, conid } of known) {
      const row = rows.get(conid);
      quotes[symbol] = row === undefined ? emptyQuote(symbol, receivedAt) : snapshotToQuote(symbol, row, receivedAt);
    }
    return { quotes, missing };
  }

  /**
   * The first snapshot of a conid only subscribes it and comes back without fields. Ask again, a
   * bounded number of times, for just the empty ones, so the caller gets prices on its first request.
   */
  private async snapshotWithWarmup(conids: number[]): Promise<Map<number, SnapshotRow>> {
    // A new brokerage session has no subscriptions: every conid deserves its warm-up again.
    if (this.withoutDataEpoch !== this.gateway.epoch) this.withoutData.clear();
    this.withoutDataEpoch = this.gateway.epoch;
    const rows = new Map<number, SnapshotRow>();
    let pending = conids;
    const retries = this.options.warmupRetries ?? 4;
    for (let attempt = 0; attempt <= retries && pending.length > 0; attempt += 1) {
      if (attempt > 0) await sleep((this.options.warmupDelayMs ?? 150) * attempt);
      for (const row of await this.snapshot(pending)) {
        if (row.hasData || !rows.has(row.conid)) rows.set(row.conid, row);
        if (row.hasData) this.withoutData.delete(row.conid);
      }
      pending = pending.filter((conid) => rows.get(conid)?.hasData !== true && (attempt > 0 || !this.withoutData.has(conid)));
    }
    for (const conid of pending) this.withoutData.set(conid, true);
    return rows;
  }

  private snapshot(conids: number[]): Promise<SnapshotRow[]> {
    return this.gateway.call('/iserver/marketdata/snapshot', parseSnapshot, {
      query: `conids=${conids.join(',')}&fields=${SNAPSHOT_FIELDS}`,
      prepare: (force) => this.primeBrokerageAccounts(force),
    });
  }

  /** The gateway serves market data only after /iserver/accounts was read in this session (`force`: read it again, the gateway forgot). */
  private primeBrokerageAccounts(force = false): Promise<void> {
    const epoch = this.gateway.epoch;
    if (this.primedEpoch === epoch && !force) return Promise.resolve();
    if (this.priming !== undefined) return this.priming;
    this.priming = this.gateway
      .call('/iserver/accounts', parseIserverAccounts)
      .then(() => {
        this.primedEpoch = epoch;
      })
      .finally(() => {
        this.priming = undefined;
      });
    return this.priming;
  }

  /**
   * What the websocket needs before it opens: a brokerage session (recovered once if lost, the answers
   * read by their meaning as every REST call's are) in which /iserver/accounts was read, then POST
   * /tickle's session value and the cookies the gateway set. `verify` reads /iserver/accounts again even
   * in a session that read it: a socket was just refused, and a data call's refusal is what the gateway's
   * mending (classify-response.ts's meanings) acts on when the tickle claims a session it does not serve.
   */
  async streamSession(options: { verify?: boolean } = {}): Promise<{ session: string; cookies: string | undefined }> {
    const tickle = async () => {
      const answer = await this.gateway.send('/tickle', { method: 'POST', body: {} });
      if (answer.kind === 'logged_out') throw new SessionRefusedError('logged_out');
      const auth = answer.kind === 'ok' ? parseTickle(answer.json) : null;
      const session = answer.kind === 'ok' ? parseTickleSession(answer.json) : null;
      const lost = (answer.kind === 'refused' && answer.meaning === 'no_session') || (auth !== null && !auth.authenticated);
      if (!lost && answer.kind !== 'ok') throw new ApiError('UPSTREAM_ERROR', `the IBKR gateway refused /tickle (HTTP ${answer.status})`);
      return { session, auth, lost };
    };
    let answer = await tickle();
    if (answer.lost) {
      // The socket closes at once without a brokerage session: get one back first, as a REST call would.
      const outcome = await this.gateway.recover(answer.auth?.established ? 'not_authenticated' : 'no_session');
      if (outcome !== 'ready') throw new SessionRefusedError(outcome);
      answer = await tickle();
      if (answer.lost) throw new SessionRefusedError('not_started');
    }
    // `verify`: /iserver/accounts read again, so that a refusal the tickle did not show is mended (or said);
    // a session started by that mending gets its own session value.
    const epoch = this.gateway.epoch;
    await this.primeBrokerageAccounts(options.verify === true);
    if (this.gateway.epoch !== epoch) answer = await tickle();
    if (answer.session === null || answer.lost) throw new SessionRefusedError('not_started');
    return { session: answer.session, cookies: this.gateway.cookies };
  }

  conid(symbol: string): Promise<number | null> {
    return this.conidFor(symbol);
  }

  /**
   * Symbol -> conid, cached for a day, and "no such symbol" for an hour: only the gateway's clean "not found"
   * (or a search without the symbol's listing) is that. Any other failure is the gateway's, not the symbol's:
   * never cached, and the caller hears the broker is unavailable. Concurrent lookups of one symbol share a call.
   */
  private conidFor(symbol: string): Promise<number | null> {
    const cached = this.conids.get(symbol);
    if (cached !== undefined) return Promise.resolve(cached.conid);
    let lookup = this.lookups.get(symbol);
    if (lookup === undefined) {
      lookup = this.gateway
        .call('/iserver/secdef/search', parseSecdefSearch, { query: `symbol=${encodeURIComponent(symbol)}` })
        .then(
          (listings) => pickListing(listings, symbol)?.conid ?? null,
          (error: unknown) => {
            if (error instanceof ApiError && error.code === 'SYMBOL_NOT_FOUND') return null;
            throw searchFailed(error);
          },
        )
        .then((conid) => {
          this.conids.set(symbol, { conid }, conid === null ? { ttl: this.options.unknownSymbolTtlMs ?? 3_600_000 } : {});
          return conid;
        })
        .finally(() => this.lookups.delete(symbol));
      this.lookups.set(symbol, lookup);
    }
    return lookup;
  }
}

/** A contract search that failed says nothing of the symbol: the broker is unavailable for now (the cause keeps any drift). */
function searchFailed(error: unknown): ApiError {
  if (error instanceof ApiError && error.code === 'BROKER_UNAVAILABLE') return error;
  const message = error instanceof ApiError ? error.message : 'the IBKR gateway call failed';
  return new ApiError('BROKER_UNAVAILABLE', `the IBKR contract search failed: ${message}`, {
    retryAfterSeconds: error instanceof ApiError ? (error.retryAfterSeconds ?? 5) : 5,
    cause: error,
  });
}
