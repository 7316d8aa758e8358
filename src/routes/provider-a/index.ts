// Provider A (Alpha Vantage): quotes, technical indicators, symbol search, price series and the
// Alpha Vantage-compatible /query. Without a key (live mode) the routes stay
// registered and answer PROVIDER_NOT_CONFIGURED, so the API surface never depends on configuration.
import type { FastifyPluginAsync } from 'fastify';
import type { BudgetLimits } from '../../budget/budget-guard.js';
import { ApiError } from '../../errors.js';
import { AlphaVantageClient } from '../../upstreams/alpha-vantage/alpha-vantage-client.js';
import { HttpClient } from '../../upstreams/http-client.js';
import { createYahooChartSource } from '../../upstreams/yahoo/create-yahoo-source.js';
import { YAHOO } from '../../upstreams/yahoo/yahoo-chart-source.js';
import { QuoteService } from '../../quotes/quote-service.js';
import { quoteRoute } from './quote.js';
import { technicalRoute } from './technical.js';
import { searchRoute } from './search.js';
import { dailyRoute } from './daily.js';
import { queryRoute } from './query.js';

export const ALPHA_VANTAGE = 'alphaVantage';

export type ClientGetter = () => AlphaVantageClient;

const providerARoutes: FastifyPluginAsync = async (app) => {
  const { config, budgets, logger, cache, scopes, sources } = app.deps;
  const { apiKey, url, callsPerMinute, callsPerDay, minIntervalMs } = config.alphaVantage;
  let limits: BudgetLimits = { perMinute: callsPerMinute, perDay: callsPerDay, minIntervalMs };
  let client: AlphaVantageClient | undefined;
  if (apiKey !== undefined) {
    const http = new HttpClient({ name: 'Alpha Vantage', timeoutMs: config.upstreamTimeoutMs, logger });
    app.addHook('onClose', () => http.close());
    const budget = budgets.get(ALPHA_VANTAGE, limits);
    // A guard registered earlier (a benchmark's scaled one) has the limits that count.
    limits = budget.limits;
    client = new AlphaVantageClient({ url, apiKey, http, budget });
  }
  const fallback = config.yahoo.quoteFallback === 'yahoo' ? createYahooChartSource({ config, logger, budgets }) : undefined;
  if (fallback !== undefined) app.addHook('onClose', () => fallback.close());
  app.deps.quotes = new QuoteService({
    cache,
    window: config.cache.windows.QUOTE,
    scopes: { primary: scopes.of(ALPHA_VANTAGE), fallback: scopes.of(YAHOO) },
    primaryName: ALPHA_VANTAGE,
    limits,
    fallback,
    tally: sources,
  });
  const getClient: ClientGetter = () => {
    if (client === undefined) throw new ApiError('PROVIDER_NOT_CONFIGURED', 'provider A is not configured: set ALPHA_VANTAGE_API_KEY');
    return client;
  };
  quoteRoute(app, getClient);
  technicalRoute(app, getClient);
  searchRoute(app, getClient);
  dailyRoute(app, getClient);
  queryRoute(app, getClient);
};

export default providerARoutes;
