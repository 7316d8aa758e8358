// The brokerage connection: /health, /accounts, /positions, /quotes (and /stream-ticket) over whichever broker BROKER names
// (built by the composition root, deps.ts, and closed with it).
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin } from '../route-plugin.js';
import { accountsRoute } from './accounts.js';
import { healthRoute } from './health.js';
import { positionsRoute } from './positions.js';
import { quotesRoute } from './quotes.js';
import { streamTicketRoute } from './stream-ticket.js';

const brokerRoutes: FastifyPluginAsync = async (app) => {
  healthRoute(app, app.deps);
  accountsRoute(app, app.deps);
  positionsRoute(app, app.deps);
  quotesRoute(app, app.deps);
  streamTicketRoute(app);
};

export default routePlugin('mdp-broker-routes', brokerRoutes);
