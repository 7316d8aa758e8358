// The broker interface over the IBKR Client Portal Gateway: health from the auth status (with one
// recovery attempt), accounts and positions from /portfolio (accounts first, pages until a short one),
// quotes from snapshots (symbol -> conid cached for a day, /iserver/accounts once per session, and a
// bounded warm-up retry for the empty first snapshot), and a keep-alive tickle while the service runs.
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
import { IbkrGateway, type IbkrGatewayOptions } from './ibkr-gateway.js';
import { parseIserverAccounts, parsePortfolioAccounts } from './parse-accounts.js';
import { IBKR_PAGE_SIZE, isLastPositionsPage, parsePositionsPage } from './parse-positions.js';
import { parseSecdefSearch, pickListing } from './parse-secdef.js';
import { parseAuthStatus, parseTickle } from './parse-session.js';
import { parseSnapshot, SNAPSHOT_FIELDS, type SnapshotRow, snapshotToQuote } from './parse-snapshot.js';
import { type HealthCheck, timedHealth } from '../../broker/timed-health.js';

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
  /** Passed to the gateway (pacer, recovery polling). */
  gateway?: Partial<Omit<IbkrGatewayOptions, 'url' | 'http' | 'logger'>>;
}

const DAY_MS = 86_400_000;
/** Guards against a gateway that never answers an empty page. */
const MAX_PAGES = 200;
const PORTFOLIO_ACCOUNTS_REUSE_MS = 5_000;

export class IbkrBroker implements Broker {
  readonly kind = 'ibkr' as const;
  readonly gateway: IbkrGateway;
  private readonly http: HttpClient;
  private readonly logger: Logger;
  private readonly conids: LRUCache<string, { conid: number | null }>;
  private readonly lookups = new Map<string, Promise<number | null>>();
  /** Conids that stayed empty through a whole warm-up (no market data permission, no quotes): not retried for a minute. */
  private readonly withoutData = new LRUCache<number, true>({ max: 20_000, ttl: 60_000 });
  private withoutDataEpoch = 0;
  private portfolioAccounts: { at: number; promise: Promise<BrokerAccount[]> } | undefined;
  private primedEpoch = -1;
  private priming: Promise<void> | undefined;
  private tickleTimer: NodeJS.Timeout | undefined;
  private tickling = false;
  private closed = false;

  constructor(private readonly options: IbkrBrokerOptions) {
    this.logger = options.logger;
    // Verification is switched off for this client only: the gateway's certificate is self-signed.
    this.http = new HttpClient({
      name: 'IBKR gateway',
      timeoutMs: options.timeoutMs,
      logger: options.logger,
      insecureTls: !options.tlsVerify,
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
      if (answer.kind === 'no_session' || (status !== null && !status.authenticated)) {
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
    return timedHealth('ibkr', () => this.checkSession());
  }

  private async checkSession(): Promise<HealthCheck> {
    const login = `log in at ${this.gateway.origin}`;
    try {
      const answer = await this.gateway.send('/iserver/auth/status');
      if (answer.kind === 'logged_out') {
        // Usually a person must log in; a lapsed session can sometimes be re-authenticated, so try once.
        if (await this.gateway.recover('not_authenticated'))
          return { status: 'connected', message: 'Connected to IBKR; the session was re-authenticated.' };
        return { status: 'unauthenticated', message: `The IBKR gateway is running but nobody is logged in: ${login}.` };
      }
      if (answer.kind === 'error') {
        const message = `The IBKR gateway answered with an error (HTTP ${answer.status}); restart it if this persists.`;
        return {
          status: 'disconnected',
          message,
          ...(answer.drift === undefined ? {} : { unreadable: { reason: answer.drift, message: answer.message } }),
        };
      }
      const auth = answer.kind === 'ok' ? parseAuthStatus(answer.json) : undefined;
      if (auth?.authenticated) {
        if (!auth.connected)
          return {
            status: 'disconnected',
            message: "The IBKR gateway is logged in but has lost its connection to IBKR's servers; it reconnects by itself, or restart it.",
          };
        const competing = auth.competing ? ' Another session (TWS or the mobile app) competes for market data.' : '';
        return { status: 'connected', message: `Connected to IBKR through the Client Portal Gateway.${competing}` };
      }
      const recovered = await this.gateway.recover(auth?.established ? 'not_authenticated' : 'no_session');
      if (recovered) return { status: 'connected', message: 'Connected to IBKR; the brokerage session was re-established.' };
      return {
        status: 'unauthenticated',
        message: `The IBKR gateway has no brokerage session and one could not be started: ${login} again.`,
      };
    } catch (error) {
      const apiError = error instanceof ApiError ? error : new ApiError('UPSTREAM_ERROR', 'the IBKR gateway check failed');
      if (apiError.code === 'UPSTREAM_TIMEOUT')
        return { status: 'disconnected', message: `The IBKR gateway at ${this.gateway.origin} did not answer in time.` };
      if (/not running|not reachable/.test(apiError.message)) {
        return {
          status: 'disconnected',
          message: `Nothing answers at ${this.gateway.origin}: start the IBKR Client Portal Gateway, then ${login}.`,
        };
      }
      const drift = driftOf(error);
      return {
        status: 'disconnected',
        message: `${capitalise(apiError.message)}.`,
        ...(drift === undefined ? {} : { unreadable: { reason: drift, message: apiError.message } }),
      };
    }
  }

  accounts(): Promise<BrokerAccount[]> {
    // /portfolio/accounts is paced at one call per 5 s; it also has to precede every /portfolio read.
    const now = Date.now();
    if (this.portfolioAccounts !== undefined && now - this.portfolioAccounts.at < PORTFOLIO_ACCOUNTS_REUSE_MS)
      return this.portfolioAccounts.promise;
    const promise = this.gateway.call('/portfolio/accounts', parsePortfolioAccounts);
    const memo = { at: now, promise };
    this.portfolioAccounts = memo;
    promise.catch(() => {
      if (this.portfolioAccounts === memo) this.portfolioAccounts = undefined;
    });
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
      const { rows, last } = await this.gateway.call(`/portfolio/${encodeURIComponent(accountId)}/positions/${page}`, (json) => ({
        rows: parsePositionsPage(json, accountId),
        last: isLastPositionsPage(json),
      }));
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
    for (const { symbol, conid } of known) {
      const row = rows.get(conid);
      quotes[symbol] = row === undefined ? emptyQuote(symbol) : snapshotToQuote(symbol, row);
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
      prepare: () => this.primeBrokerageAccounts(),
    });
  }

  /** The gateway serves market data only after /iserver/accounts was read in this session. */
  private primeBrokerageAccounts(): Promise<void> {
    const epoch = this.gateway.epoch;
    if (this.primedEpoch === epoch) return Promise.resolve();
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

  /** Symbol -> conid, cached for a day (a miss for an hour); concurrent lookups of one symbol share a call. */
  private conidFor(symbol: string): Promise<number | null> {
    const cached = this.conids.get(symbol);
    if (cached !== undefined) return Promise.resolve(cached.conid);
    let lookup = this.lookups.get(symbol);
    if (lookup === undefined) {
      lookup = this.gateway
        .call('/iserver/secdef/search', parseSecdefSearch, { query: `symbol=${encodeURIComponent(symbol)}`, callerInput: true })
        // A symbol the gateway refuses outright is as unknown as one it cannot find.
        .catch((error: unknown) => {
          if (error instanceof ApiError && error.code === 'SYMBOL_NOT_FOUND') return [];
          throw error;
        })
        .then((listings) => {
          const conid = pickListing(listings, symbol)?.conid ?? null;
          this.conids.set(symbol, { conid }, conid === null ? { ttl: this.options.unknownSymbolTtlMs ?? 3_600_000 } : {});
          return conid;
        })
        .finally(() => this.lookups.delete(symbol));
      this.lookups.set(symbol, lookup);
    }
    return lookup;
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
