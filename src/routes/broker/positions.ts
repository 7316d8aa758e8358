// GET /api/broker/positions -> { positions: [...] } across every account and every page.
import type { FastifyInstance } from 'fastify';
import { errorResponses, NOT_MODIFIED, type TypeBoxTypeProvider } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import { brokerDataConfig, brokerPreflight, PRIVATE } from './broker-data.js';
import { PositionsResponse } from './schemas.js';
import type { AppDeps } from '../../deps.js';

export function positionsRoute(app: FastifyInstance, { brokerData }: Pick<AppDeps, 'brokerData'>): void {
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
    async (request, reply) => sendCached(request, reply, await brokerData.positions(), PRIVATE),
  );
}
