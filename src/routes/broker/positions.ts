// GET /api/broker/positions -> { positions: [...] } across every account and every page.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Broker } from '../../broker/broker.js';
import { ensureConfigured } from '../../broker/not-configured-broker.js';
import { errorResponses, NOT_MODIFIED } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import { brokerDataConfig, brokerPreflight, PRIVATE } from './broker-data.js';
import { PositionsResponse } from './schemas.js';

export function positionsRoute(app: FastifyInstance, broker: Broker): void {
  const window = app.deps.config.cache.windows.BROKER_POSITIONS;
  const scope = app.deps.scopes.of(broker.kind);
  brokerPreflight(app, '/positions');
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/positions',
    {
      config: brokerDataConfig(app),
      schema: {
        operationId: 'getBrokerPositions',
        summary: 'Open positions',
        description:
          'Every position of every account, all pages, with numbers as numbers. Cached (fresh 5 s by default); see X-Cache and Age.',
        tags: ['broker'],
        response: { 200: PositionsResponse, ...NOT_MODIFIED, ...errorResponses(401, 403, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      ensureConfigured(broker);
      const result = await app.deps.cache.fetch(`${scope}:positions`, window, async () => ({ positions: await broker.positions() }), {
        upstream: broker.kind,
      });
      return sendCached(request, reply, result, PRIVATE);
    },
  );
}
