// GET /api/broker/health -> the connection state, checked live (at most once per ~1.5 s). Always 200
// when the service can say anything: the state is in the body.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Broker } from '../../broker/broker.js';
import { errorResponses, NOT_MODIFIED } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import { HealthMemo } from './health-memo.js';
import { HealthResponse } from './schemas.js';

export function healthRoute(app: FastifyInstance, broker: Broker): void {
  const memo = new HealthMemo(broker, app.deps.health);
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
    async (request, reply) => sendCached(request, reply, await memo.get()),
  );
}
