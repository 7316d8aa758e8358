// The market area: the aggregated overview. Its source has no key, so it is always configured; the
// source itself is chosen by configuration (see overview-sources.ts) or passed in by a test.
import type { FastifyPluginAsync } from 'fastify';
import type { OverviewSource } from '../../upstreams/overview-source.js';
import { MarketOverview } from './market-overview.js';
import { overviewRoute } from './overview.js';
import { createOverviewSource } from './overview-sources.js';

export interface MarketRoutesOptions {
  /** Replaces the configured source; the plugin still closes it. */
  source?: OverviewSource;
}

const marketRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (app, options) => {
  const { config, budgets, logger, cache, health } = app.deps;
  const source = options.source ?? createOverviewSource({ config, logger, budgets });
  if (source === undefined) {
    overviewRoute(app, undefined);
    return;
  }
  app.addHook('onClose', () => source.close());
  const overview = new MarketOverview({
    source,
    scope: app.deps.scopes.of(source.name),
    symbols: config.overview.symbols,
    concurrency: config.overview.concurrency,
    window: config.cache.windows.OVERVIEW,
    cache,
    health,
    logger,
  });
  overviewRoute(app, overview);
};

export default marketRoutes;
