// The Yahoo chart source as configured: YAHOO_URL, and one budget (YAHOO_CALLS_PER_MINUTE, shared by the
// overview and the fallback, and across replicas with Redis) whoever creates a source first.
import type { Logger } from 'pino';
import type { BudgetLimits } from '../../budget/budget-guard.js';
import type { BudgetRegistry } from '../../budget/budget-registry.js';
import type { Config } from '../../config.js';
import { HttpClient } from '../http-client.js';
import { YAHOO, YahooChartSource } from './yahoo-chart-source.js';

export interface YahooSourceContext {
  config: Config;
  logger: Logger;
  budgets: BudgetRegistry;
}

export function yahooLimits(config: Config): BudgetLimits {
  return { perMinute: config.yahoo.callsPerMinute, perDay: 0, minIntervalMs: 0 };
}

export function createYahooChartSource({ config, logger, budgets }: YahooSourceContext): YahooChartSource {
  return new YahooChartSource({
    url: config.overview.url,
    http: new HttpClient({ name: 'Yahoo', timeoutMs: config.upstreamTimeoutMs, logger, connections: config.overview.concurrency }),
    budget: budgets.get(YAHOO, yahooLimits(config)),
  });
}
