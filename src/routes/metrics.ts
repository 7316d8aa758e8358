// GET /metrics on the public port: Prometheus text for the bearer of METRICS_TOKEN, and for nobody else (the
// same 404 as an unknown path, with or without a token set). A route whether or not a token is set, so that the
// OpenAPI document lists it with its security; the metrics and their own listener are plugins/app/metrics.ts.
import type {} from '@fastify/rate-limit';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { authorised, notFound } from '../plugins/app/metrics-access.js';
import { routePlugin } from './route-plugin.js';
import { ErrorResponse } from './schemas.js';

const metricsRoute: FastifyPluginAsync = async (app) => {
  const { token } = app.deps.config.metrics;
  // No CORS: a browser page has no business reading internals, even with the token.
  app.get(
    '/metrics',
    {
      config: { rateLimit: false, cors: false },
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics, on the public port for the bearer of METRICS_TOKEN',
        description:
          'Served by default on a listener of its own (METRICS_PORT, METRICS_HOST: 127.0.0.1:9464), not here. On this port only when METRICS_TOKEN is set, and only to `Authorization: Bearer <METRICS_TOKEN>`.',
        tags: ['system'],
        security: [{ metricsToken: [] }],
        response: {
          200: { description: 'The Prometheus text format.', content: { 'text/plain': { schema: Type.String() } } },
          404: Type.Ref(ErrorResponse, { description: 'NOT_FOUND: no METRICS_TOKEN is set, or the request did not carry it.' }),
        },
      },
    },
    async (request, reply) => {
      if (token === undefined || !authorised(token, request.headers.authorization)) throw notFound('/metrics');
      const { text, contentType } = await app.metrics.text();
      return reply.header('cache-control', 'no-store').type(contentType).send(text);
    },
  );
};

export default routePlugin('mdp-metrics-route', metricsRoute);
