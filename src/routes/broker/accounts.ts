// GET /api/broker/accounts -> { accounts: [...] } in one shape for every broker.
import type { FastifyInstance } from 'fastify';
import { errorResponses, NOT_MODIFIED, type TypeBoxTypeProvider } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import { brokerDataConfig, brokerPreflight, PRIVATE } from './broker-data.js';
import { AccountsResponse } from './schemas.js';
import type { AppDeps } from '../../deps.js';

export function accountsRoute(app: FastifyInstance, { brokerData }: Pick<AppDeps, 'brokerData'>): void {
  brokerPreflight(app, '/accounts');
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/accounts',
    {
      config: brokerDataConfig(app),
      schema: {
        operationId: 'getBrokerAccounts',
        summary: 'Brokerage accounts',
        description: 'Every account the broker session can read. Cached (fresh 60 s by default); see X-Cache and Age.',
        tags: ['broker'],
        response: { 200: AccountsResponse, ...NOT_MODIFIED, ...errorResponses(401, 403, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => sendCached(request, reply, await brokerData.accounts(), PRIVATE),
  );
}
