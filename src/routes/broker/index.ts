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
  const { broker } = app.deps;
  healthRoute(app, broker);
  accountsRoute(app, broker);
  positionsRoute(app, broker);
  quotesRoute(app, broker);
  streamTicketRoute(app);
};

export default routePlugin('mdp-broker-routes', brokerRoutes);
