// System routes: status for people, liveness and readiness for orchestrators. They read state only, are
// never rate limited and never cached by intermediaries.
import type {} from '@fastify/rate-limit';
import type { FastifyPluginAsync } from 'fastify';
import { routePlugin } from '../route-plugin.js';
import { errorResponses } from '../schemas.js';
import { makeEntry } from '../../cache/cache-store.js';
import { LiveResponse, ReadyResponse, SystemStatus } from '../../services/system-status-schema.js';
import { buildSystemStatus, readReadiness, STATUS_WINDOW, statusFingerprint } from '../../services/system-status.js';
import { statusSources } from './status-sources.js';

const NO_RATE_LIMIT = { rateLimit: false } as const;
/** They take no parameters; what a caller can still get wrong is the request itself (a body on GET, an over-long URL). */
const BAD_REQUEST = errorResponses(400);

const systemRoutes: FastifyPluginAsync = async (app) => {
  const startedAt = new Date();
  const status = () => buildSystemStatus(statusSources(app, startedAt));
  app.liveTopics.provide('status', async () => ({ entry: makeEntry(await status(), STATUS_WINDOW), status: 'MISS' }), statusFingerprint);

  app.get(
    '/status',
    {
      config: NO_RATE_LIMIT,
      schema: {
        operationId: 'getSystemStatus',
        summary: 'Service status: mode, store, and per upstream its health, budget and cache figures',
        description:
          'Reads state the service already holds and never calls an upstream, so it answers in milliseconds even when every upstream is down. `status` is ok, degraded or down, with the reason.',
        tags: ['system'],
        response: { 200: SystemStatus, ...BAD_REQUEST },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return status();
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
