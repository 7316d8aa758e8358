// The market area: the aggregated overview, built by the composition root (deps.ts) from the source
// OVERVIEW_SOURCE names; undefined when it is `none`, and the route then answers 503.
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin } from '../route-plugin.js';
import { overviewRoute } from './overview.js';

const marketRoutes: FastifyPluginAsync = async (app) => {
  overviewRoute(app, app.deps.overview);
};

export default routePlugin('mdp-market-routes', marketRoutes);
