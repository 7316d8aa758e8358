// Provider B (Massive, formerly Polygon.io): dividends. Without a key (live mode) the route stays
// registered and answers PROVIDER_NOT_CONFIGURED, so the API surface never depends on configuration.
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../errors.js';
import { HttpClient } from '../../upstreams/http-client.js';
import { MassiveClient } from '../../upstreams/massive/massive-client.js';
import { dividendsRoute } from './dividends.js';

export const MASSIVE = 'massive';

export type MassiveClientGetter = () => MassiveClient;

const providerBRoutes: FastifyPluginAsync = async (app) => {
  const { config, budgets, logger } = app.deps;
  const { apiKey, url, callsPerMinute } = config.massive;
  let client: MassiveClient | undefined;
  if (apiKey !== undefined) {
    const http = new HttpClient({ name: 'Massive', timeoutMs: config.upstreamTimeoutMs, logger });
    app.addHook('onClose', () => http.close());
    const budget = budgets.get(MASSIVE, { perMinute: callsPerMinute, perDay: 0, minIntervalMs: 0 });
    client = new MassiveClient({ url, apiKey, http, budget });
  }
  const getClient: MassiveClientGetter = () => {
    if (client === undefined) throw new ApiError('PROVIDER_NOT_CONFIGURED', 'provider B is not configured: set MASSIVE_API_KEY');
    return client;
  };
  dividendsRoute(app, getClient);
};

export default providerBRoutes;
