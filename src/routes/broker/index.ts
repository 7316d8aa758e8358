// The brokerage connection: /health, /accounts, /positions, /quotes over whichever broker BROKER names.
// The broker (and its keep-alive timer, for IBKR) lives as long as the app and is closed with it.
import type { FastifyPluginAsync } from 'fastify';
import type { Broker } from '../../broker/broker.js';
import { createBroker, type CreateBrokerOptions } from '../../broker/create-broker.js';
import { accountsRoute } from './accounts.js';
import { healthRoute } from './health.js';
import { positionsRoute } from './positions.js';
import { quotesRoute } from './quotes.js';

export interface BrokerRoutesOptions {
  /** For tests and benchmarks: broker tuning (keep-alive period, warm-up, pacing). */
  brokerOptions?: CreateBrokerOptions;
}

const brokerRoutes: FastifyPluginAsync<BrokerRoutesOptions> = async (app, opts) => {
  const { config, logger } = app.deps;
  const broker: Broker = createBroker(config, logger, opts.brokerOptions, { store: app.deps.store, scopes: app.deps.scopes });
  broker.start();
  app.addHook('onClose', () => broker.close());
  logger.info({ broker: broker.kind, mode: config.mode }, 'broker endpoints ready');

  healthRoute(app, broker);
  accountsRoute(app, broker);
  positionsRoute(app, broker);
  quotesRoute(app, broker);
};

export default brokerRoutes;
