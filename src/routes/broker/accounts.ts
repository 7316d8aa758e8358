// GET /api/broker/accounts -> { accounts: [...] } in one shape for every broker.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Broker } from '../../broker/broker.js';
import { ensureConfigured } from '../../broker/not-configured-broker.js';
import { errorResponses, NOT_MODIFIED } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import { brokerDataConfig, brokerPreflight, PRIVATE } from './broker-data.js';
import { AccountsResponse } from './schemas.js';

export function accountsRoute(app: FastifyInstance, broker: Broker): void {
  const window = app.deps.config.cache.windows.BROKER_ACCOUNTS;
  const scope = app.deps.scopes.of(broker.kind);
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
    async (request, reply) => {
      ensureConfigured(broker);
      const result = await app.deps.cache.fetch(`${scope}:accounts`, window, async () => ({ accounts: await broker.accounts() }), {
        upstream: broker.kind,
      });
      return sendCached(request, reply, result, PRIVATE);
    },
  );
}
