// Provider B (Massive, formerly Polygon.io): dividends, over the client and cursor codec the composition
// root built (deps.ts). Without a key (live mode) the route stays registered and answers
// PROVIDER_NOT_CONFIGURED, so the API surface never depends on configuration.
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin } from '../route-plugin.js';
import { dividendsRoute } from './dividends.js';

const providerBRoutes: FastifyPluginAsync = async (app) => {
  dividendsRoute(app, app.deps);
};

export default routePlugin('mdp-provider-b-routes', providerBRoutes);
