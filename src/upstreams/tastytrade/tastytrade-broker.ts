// The broker interface over the Tastytrade Open API: accounts, positions of every open account, quotes
// from /market-data/by-type, and a health check that costs one cheap call (plus a token refresh at most
// every 15 minutes).
import type { Logger } from 'pino';
import { ApiError, driftOf } from '../../core/errors.js';
import type { Broker, BrokerAccount, BrokerHealth, BrokerPosition, BrokerQuotes } from '../../broker/broker.js';
import { HttpClient } from '../http-client.js';
import { OutboundProxy } from '../outbound-proxy.js';
import { parseAccounts } from './parse-accounts.js';
import { parseMarketData } from './parse-market-data.js';
import { parsePositions } from './parse-positions.js';
import { parseQuoteToken, type QuoteToken } from './parse-quote-token.js';
import { marketDataQuery, toMarketDataRequest } from './symbols.js';
import { TastytradeClient } from './tastytrade-client.js';
import { TokenRefusedError } from './token-manager.js';
import { type HealthCheck, timedHealth } from '../../broker/timed-health.js';

export interface TastytradeBrokerOptions {
  url: string;
  clientSecret: string;
  refreshToken: string;
  timeoutMs: number;
  logger: Logger;
  now?: () => number;
  refreshMarginMs?: number;
  /** The proxy Tastytrade is reached through, if any; direct when not given. */
  outbound?: OutboundProxy;
}

export class TastytradeBroker implements Broker {
  readonly kind = 'tastytrade' as const;
  readonly client: TastytradeClient;
  private readonly http: HttpClient;
  private readonly origin: string;
  /** The proxy Tastytrade is reached through, if any: the DXLink socket follows the same rule. */
  readonly outbound: OutboundProxy;
  private closed = false;

  constructor(options: TastytradeBrokerOptions) {
    this.outbound = options.outbound ?? OutboundProxy.DIRECT;
    this.http = new HttpClient({ name: 'Tastytrade', timeoutMs: options.timeoutMs, logger: options.logger, outbound: this.outbound });
    this.client = new TastytradeClient({ ...options, http: this.http });
    this.origin = new URL(options.url).origin;
  }

  start(): void {
    // Tokens are refreshed on use, ahead of expiry: nothing runs in the background.
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.http.close();
  }

  health(): Promise<BrokerHealth> {
    return timedHealth('tastytrade', () => this.check(), this.outbound.proxyFor(this.origin)?.address);
  }

  private async check(): Promise<HealthCheck> {
    try {
      // The health route is public: it says whether data can be read, never what the accounts are.
      await this.accounts();
      return { status: 'connected', message: 'Connected to Tastytrade.' };
    } catch (error) {
      if (error instanceof TokenRefusedError) return { status: 'unauthenticated', message: `${error.message}.` };
      const apiError = error instanceof ApiError ? error : new ApiError('UPSTREAM_ERROR', 'the Tastytrade check failed');
      if (/refused a freshly issued/.test(apiError.message))
        return { status: 'unauthenticated', message: `${apiError.message}; check the OAuth application's scopes.` };
      if (/not reachable|closed the connection/.test(apiError.message))
        return { status: 'disconnected', message: `Nothing answers at ${this.origin}: check the network or TASTYTRADE_URL.` };
      if (apiError.code === 'UPSTREAM_TIMEOUT')
        return { status: 'disconnected', message: `Tastytrade at ${this.origin} did not answer in time.` };
      const drift = driftOf(error);
      return {
        status: 'disconnected',
        message: `${apiError.message}.`,
        ...(drift === undefined ? {} : { unreadable: { reason: drift, message: apiError.message } }),
      };
    }
  }

  accounts(): Promise<BrokerAccount[]> {
    return this.client.get('/customers/me/accounts', parseAccounts);
  }

  async positions(): Promise<BrokerPosition[]> {
    const accounts = await this.accounts();
    const lists = await Promise.all(
      accounts.map((a) =>
        this.client.get(
          `/accounts/${encodeURIComponent(a.accountId)}/positions`,
          (json) => parsePositions(json, a.accountId, Date.now()),
          'include-marks=true',
        ),
      ),
    );
    return lists.flat();
  }

  /** The DXLink token and address for the real-time feed (tastytrade-quote-stream.ts). */
  quoteToken(): Promise<QuoteToken> {
    return this.client.get('/api-quote-tokens', parseQuoteToken);
  }

  async quotes(symbols: string[]): Promise<BrokerQuotes> {
    const request = toMarketDataRequest(symbols);
    const items = await this.client.get(
      '/market-data/by-type',
      (json) => parseMarketData(json, Date.now()),
      marketDataQuery(request.byType),
    );
    const quotes: BrokerQuotes['quotes'] = {};
    for (const item of items) {
      const ours = request.ours.get(item.symbol.toUpperCase());
      if (ours !== undefined) quotes[ours] = { symbol: ours, ...item.quote };
    }
    return { quotes, missing: symbols.filter((s) => quotes[s] === undefined) };
  }
}
