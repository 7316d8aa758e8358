// The market data providers' clients, each with its own connection pool and its budget: provider A (Alpha
// Vantage), Yahoo's charts (one client and pool for the overview and both fallbacks, under one budget) and
// provider B (Massive). The brokers are built apart (broker.ts): their pacing is not a budget.
import type { OutboundProxy } from '../upstreams/outbound-proxy.js';
import type { Logger } from 'pino';
import type { BudgetGuard, BudgetLimits } from '../budget/budget-guard.js';
import type { BudgetRegistry } from '../budget/budget-registry.js';
import type { Config } from '../core/config.js';
import { type Configured, optional } from '../core/configured.js';
import { ALPHA_VANTAGE, MASSIVE, UPSTREAMS, type UpstreamId, YAHOO } from '../core/upstream-ids.js';
import { AlphaVantageClient } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { HttpClient } from '../upstreams/http-client.js';
import { MassiveClient } from '../upstreams/massive/massive-client.js';
import { YahooChartSource } from '../upstreams/yahoo/yahoo-chart-source.js';

export interface Upstreams {
  alphaVantage: Configured<AlphaVantageClient>;
  /** Provider A's budget, whose limits the quote service reports. */
  avBudget: BudgetGuard;
  /** Undefined unless the overview or the quote fallback reads Yahoo. */
  yahoo: YahooChartSource | undefined;
  massive: Configured<MassiveClient>;
}

export interface UpstreamsContext {
  config: Config;
  logger: Logger;
  budgets: BudgetRegistry;
  /** Budget windows for benchmarks that scale time, in place of the configured ones. */
  budgetOverrides: Partial<Record<UpstreamId, BudgetLimits>> | undefined;
  /** Which proxy, if any, each provider is reached through. */
  outbound: OutboundProxy;
  /** Each client's pool is closed with the app. */
  onClose: (close: () => Promise<void>) => void;
}

export function createUpstreams({ config, logger, budgets, budgetOverrides, outbound, onClose }: UpstreamsContext): Upstreams {
  // Every budget keeps BUDGET_RESERVE of each window for callers below their fair share (a benchmark's scaled limits too).
  const limits = (id: UpstreamId, configured: BudgetLimits) =>
    budgets.get(id, { reserve: config.budgetReserve, ...(budgetOverrides?.[id] ?? configured) });
  const http = (id: UpstreamId, connections?: number) => {
    const client = new HttpClient({ name: UPSTREAMS[id].label, timeoutMs: config.upstreamTimeoutMs, logger, connections, outbound });
    onClose(() => client.close());
    return client;
  };

  const av = config.alphaVantage;
  const avBudget = limits(ALPHA_VANTAGE, { perMinute: av.callsPerMinute, perDay: av.callsPerDay, minIntervalMs: av.minIntervalMs });
  const alphaVantage = optional(
    av.apiKey === undefined
      ? undefined
      : new AlphaVantageClient({
          url: av.url,
          apiKey: av.apiKey,
          http: http(ALPHA_VANTAGE),
          budget: avBudget,
          entitlement: av.entitlement,
          plan: av.plan,
        }),
    'provider A is not configured: set ALPHA_VANTAGE_API_KEY',
  );

  const yahooUsed = config.overview.source === 'yahoo' || config.yahoo.quoteFallback === 'yahoo';
  const yahoo = yahooUsed
    ? new YahooChartSource({
        url: config.overview.url,
        http: http(YAHOO, config.overview.concurrency),
        budget: limits(YAHOO, { perMinute: config.yahoo.callsPerMinute, perDay: 0, minIntervalMs: 0 }),
      })
    : undefined;

  const mv = config.massive;
  const massiveBudget = limits(MASSIVE, { perMinute: mv.callsPerMinute, perDay: 0, minIntervalMs: 0 });
  const massive = optional(
    mv.apiKey === undefined ? undefined : new MassiveClient({ url: mv.url, apiKey: mv.apiKey, http: http(MASSIVE), budget: massiveBudget }),
    'provider B is not configured: set MASSIVE_API_KEY',
  );
  return { alphaVantage, avBudget, yahoo, massive };
}
