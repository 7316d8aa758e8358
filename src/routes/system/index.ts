// System routes: status for people, liveness and readiness for orchestrators. They read state only, are
// never rate limited and never cached by intermediaries. Status has two views (StatusView): the local one for
// callers the broker rules admit, the public one for anyone else; `no-store` keeps every cache (the hot path,
// which replays public answers only, nginx, a browser's) from handing one caller's view to another.
import type {} from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin } from '../route-plugin.js';
import { errorResponses } from '../schemas.js';
import { makeEntry } from '../../cache/cache-store.js';
import { LiveResponse, ReadyResponse, SystemStatus } from '../../services/system-status-schema.js';
import { buildSystemStatus, readReadiness, STATUS_WINDOW, type StatusView, statusFingerprint } from '../../services/system-status.js';
import { isLocalCaller } from '../../plugins/app/broker-access.js';
import { LOCAL_STATUS } from '../../stream/stream-topics.js';
import { statusSources } from './status-sources.js';

const NO_RATE_LIMIT = { rateLimit: false } as const;
/** They take no parameters; what a caller can still get wrong is the request itself (a body on GET, an over-long URL). */
const BAD_REQUEST = errorResponses(400);

const systemRoutes: FastifyPluginAsync = async (app) => {
  const startedAt = new Date();
  const status = (view: StatusView) => buildSystemStatus(statusSources(app, startedAt), view);
  // The stream route gives a local viewer the topic of the local view, a topic of its own (stream-topics.ts).
  app.liveTopics.provide(
    'status',
    async (view) => ({ entry: makeEntry(await status(view === LOCAL_STATUS ? 'local' : 'public'), STATUS_WINDOW), status: 'MISS' }),
    statusFingerprint,
  );

  app.get(
    '/status',
    {
      config: NO_RATE_LIMIT,
      schema: {
        operationId: 'getSystemStatus',
        summary: 'Service status: mode, store, and per upstream its health, budget and cache figures',
        description:
          'Reads state the service already holds and never calls an upstream, so it answers in milliseconds even when every upstream is down. `status` is ok, degraded or down, with the reason. A caller the broker rules do not admit sees no outbound proxy, no Redis address and nothing of the broker (fields marked local only).',
        tags: ['system'],
        response: { 200: SystemStatus, ...BAD_REQUEST },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      // What the view depends on besides the address, as broker answers say it.
      reply.header('vary', 'Origin, Authorization');
      return status(isLocalCaller(request) ? 'local' : 'public');
    },
  );

  app.get(
    '/live',
    {
      config: NO_RATE_LIMIT,
      schema: {
        operationId: 'getSystemLive',
        summary: 'Liveness: the process answers',
        description: 'Always 200 while the process runs: for an orchestrator deciding whether to restart it. Reads nothing.',
        tags: ['system'],
        response: { 200: LiveResponse, ...BAD_REQUEST },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'live' as const };
    },
  );

  app.get(
    '/ready',
    {
      config: NO_RATE_LIMIT,
      schema: {
        operationId: 'getSystemReady',
        summary: 'Readiness: configuration valid and store reachable (or fallen back to local state by design)',
        description:
          'For a load balancer deciding whether to send traffic here: 503 only when Redis is configured, unreachable, and nothing local took over.',
        tags: ['system'],
        response: { 200: ReadyResponse, ...BAD_REQUEST, 503: ReadyResponse },
      },
    },
    async (_request, reply) => {
      const readiness = await readReadiness(app.deps);
      reply.header('cache-control', 'no-store');
      if (readiness.status !== 'ready') reply.code(503);
      return readiness;
    },
  );
};

export default routePlugin('mdp-system-routes', systemRoutes);
