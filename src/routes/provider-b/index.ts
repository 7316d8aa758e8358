// Provider B (Massive, formerly Polygon.io): dividends. Without a key (live mode) the route stays
// registered and answers PROVIDER_NOT_CONFIGURED, so the API surface never depends on configuration.
import type { FastifyPluginAsync } from 'fastify';
import { ApiError } from '../../errors.js';
import { HttpClient } from '../../upstreams/http-client.js';
import { cursorKeys } from '../../upstreams/massive/cursor-keys.js';
import { CursorCodec } from '../../upstreams/massive/dividend-cursor.js';
import { MassiveClient } from '../../upstreams/massive/massive-client.js';
import { dividendsRoute } from './dividends.js';

export const MASSIVE = 'massive';
const CURSOR_FOLLOW_MS = 3_600_000;

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
  // A cursor outlives every cached page that links to it: the page's fresh and stale windows, plus an hour to follow it.
  const { freshMs, staleMs } = config.cache.windows.DIVIDENDS;
  const cursors = new CursorCodec({
    keys: await cursorKeys(config.cursorSecret, app.deps.store.redis, logger),
    // Bound to the mode and Massive identity (URL and key): a cursor of another one is foreign here.
    context: app.deps.scopes.of(MASSIVE),
    ttlMs: freshMs + staleMs + CURSOR_FOLLOW_MS,
  });
  dividendsRoute(app, getClient, cursors);
};

export default providerBRoutes;
