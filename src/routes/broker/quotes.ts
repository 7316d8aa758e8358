// GET /api/broker/quotes?symbols=A,B,C -> { quotes: { A: {...} }, missing: [...] }. Up to 50 symbols; the
// sorted distinct list is the cache key, so concurrent identical requests cost one broker call.
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { FetchOptions } from '../../cache/upstream-cache.js';
import type { Broker } from '../../broker/broker.js';
import { ensureConfigured } from '../../broker/not-configured-broker.js';
import { errorResponses, NOT_MODIFIED } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import { brokerDataConfig, brokerPreflight, PRIVATE } from './broker-data.js';
import { MAX_SYMBOLS, parseSymbolList } from '../../core/symbol-list.js';
import { QuotesResponse } from './schemas.js';

const Querystring = Type.Object({
  symbols: Type.String({
    minLength: 1,
    maxLength: 2_000,
    description: `Comma-separated symbols, at most ${MAX_SYMBOLS} distinct; case-insensitive, duplicates ignored.`,
    examples: ['AAPL,MSFT,SPY'],
  }),
});

export function quotesRoute(app: FastifyInstance, broker: Broker): void {
  const window = app.deps.config.cache.windows.BROKER_QUOTES;
  const scope = app.deps.scopes.of(broker.kind);
  /** `symbols` sorted and distinct (parseSymbolList), so any order of one set shares an entry. */
  const load = (symbols: string[], extra: Partial<FetchOptions> = {}) => {
    ensureConfigured(broker);
    return app.deps.cache.fetch(`${scope}:quotes:${symbols.join(',')}`, window, () => broker.quotes(symbols), {
      upstream: broker.kind,
      ...extra,
    });
  };
  app.liveTopics.provide('brokerQuotes', async (list, { revalidate }) => load(list.split(','), { revalidate }));
  brokerPreflight(app, '/quotes');
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/quotes',
    {
      config: brokerDataConfig(app),
      schema: {
        operationId: 'getBrokerQuotes',
        summary: 'Real-time quotes from the broker',
        description: `Up to ${MAX_SYMBOLS} symbols. Unknown symbols are listed in missing, not reported as errors. Cached (fresh 1 s by default); see X-Cache and Age.`,
        tags: ['broker'],
        querystring: Querystring,
        response: { 200: QuotesResponse, ...NOT_MODIFIED, ...errorResponses(400, 401, 403, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const symbols = parseSymbolList((request.query as Static<typeof Querystring>).symbols);
      return sendCached(request, reply, await load(symbols), PRIVATE);
    },
  );
}
