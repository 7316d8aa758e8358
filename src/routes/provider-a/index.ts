// Provider A (Alpha Vantage): quotes, technical indicators, symbol search, price series and the
// Alpha Vantage-compatible /query, over the clients and services the composition root built (deps.ts).
// Without a key (live mode) the routes stay registered and answer PROVIDER_NOT_CONFIGURED, so the API
// surface never depends on configuration.
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin } from '../route-plugin.js';
import { dailyRoute } from './daily.js';
import { queryRoute } from './query.js';
import { quoteRoute } from './quote.js';
import { searchRoute } from './search.js';
import { technicalRoute } from './technical.js';

const providerARoutes: FastifyPluginAsync = async (app) => {
  quoteRoute(app, app.deps);
  technicalRoute(app, app.deps);
  searchRoute(app, app.deps);
  dailyRoute(app, app.deps);
  queryRoute(app, app.deps);
};

export default routePlugin('mdp-provider-a-routes', providerARoutes);
