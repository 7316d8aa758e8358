// The sources the overview can read from, chosen by name. Yahoo's chart API is the default; another
// source (a licensed feed, for a public deployment where Yahoo's terms forbid redistribution) is added
// here and selected by configuration, with no change to the route or the cache.
import type { BudgetRegistry } from '../../budget/budget-registry.js';
import type { Config } from '../../config.js';
import type { Logger } from 'pino';
import type { OverviewSource } from '../../upstreams/overview-source.js';
import { createYahooChartSource } from '../../upstreams/yahoo/create-yahoo-source.js';
import { YAHOO } from '../../upstreams/yahoo/yahoo-chart-source.js';

export interface SourceContext {
  config: Config;
  logger: Logger;
  budgets: BudgetRegistry;
}

export const OVERVIEW_SOURCES: Record<string, (context: SourceContext) => OverviewSource> = {
  [YAHOO]: createYahooChartSource,
};

/** The source OVERVIEW_SOURCE names, or undefined when it is `none` (the overview is switched off). */
export function createOverviewSource(context: SourceContext): OverviewSource | undefined {
  const name = context.config.overview.source;
  if (name === 'none') return undefined;
  const factory = OVERVIEW_SOURCES[name];
  if (factory === undefined) throw new Error(`unknown overview source "${name}"; known: ${Object.keys(OVERVIEW_SOURCES).join(', ')}`);
  return factory(context);
}
