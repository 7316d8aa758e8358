// GET /api/broker/health -> the connection state, checked live (at most once per ~1.5 s). Always 200
// when the service can say anything: the state is in the body.
import type { FastifyInstance } from 'fastify';
import { errorResponses, NOT_MODIFIED, type TypeBoxTypeProvider } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import { HealthResponse } from './schemas.js';
import type { AppDeps } from '../../deps.js';

export function healthRoute(app: FastifyInstance, { brokerData }: Pick<AppDeps, 'brokerData'>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/health',
    {
      schema: {
        operationId: 'getBrokerHealth',
        summary: 'State of the brokerage connection',
        description:
          'connected, unauthenticated (the broker answers but has no usable session), disconnected (nothing answers) or not_configured, with the check latency and a message saying what to do. Checked live, at most once every 1.5 s.',
        tags: ['broker'],
        response: { 200: HealthResponse, ...NOT_MODIFIED, ...errorResponses(429) },
      },
    },
    async (request, reply) => sendCached(request, reply, await brokerData.health()),
  );
}
