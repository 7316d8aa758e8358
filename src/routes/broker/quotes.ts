// GET /api/broker/quotes?symbols=A,B,C -> { quotes: { A: {...} }, missing: [...] }. Up to 50 symbols. While
// the broker's quotes stream (BROKER_STREAMING=auto and a broker with a feed), the symbols asked for are
// subscribed (and stay so for a while after the request), and a request the stream can answer whole is
// answered from it without a broker call (X-Data-Source: broker-stream). Otherwise a snapshot, cached
// under the sorted distinct list so concurrent identical requests cost one broker call
// (X-Data-Source: broker-snapshot); its answer completes the stream's quotes that lack fields.
import { type Static, Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { FetchOptions } from '../../cache/upstream-cache.js';
import { makeEntry } from '../../cache/cache-store.js';
import type { Broker, BrokerQuotes } from '../../broker/broker.js';
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

export const STREAM_SOURCE = 'broker-stream';
export const SNAPSHOT_SOURCE = 'broker-snapshot';

export function quotesRoute(app: FastifyInstance, broker: Broker): void {
  const window = app.deps.config.cache.windows.BROKER_QUOTES;
  const scope = app.deps.scopes.of(broker.kind);
  const stream = app.deps.brokerQuotes;
  /** `symbols` sorted and distinct (parseSymbolList), so any order of one set shares an entry. */
  const load = async (symbols: string[], extra: Partial<FetchOptions> = {}) => {
    ensureConfigured(broker);
    const result = await app.deps.cache.fetch(`${scope}:quotes:${symbols.join(',')}`, window, () => broker.quotes(symbols), {
      upstream: broker.kind,
      ...extra,
    });
    stream?.learn(result.entry.value, result.entry.storedAt);
    return result;
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
        description: `Up to ${MAX_SYMBOLS} symbols. Unknown symbols are listed in missing, not reported as errors. With BROKER_STREAMING=auto and a broker that has a real-time feed, answered from the feed (X-Data-Source: broker-stream; Age counts from the newest tick) once it has every field of every symbol asked for; the symbols stay subscribed for a minute after the request. Otherwise a snapshot (X-Data-Source: broker-snapshot), cached (fresh 1 s by default); see X-Cache and Age.`,
        tags: ['broker'],
        querystring: Querystring,
        response: { 200: QuotesResponse, ...NOT_MODIFIED, ...errorResponses(400, 401, 403, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const symbols = parseSymbolList((request.query as Static<typeof Querystring>).symbols);
      ensureConfigured(broker);
      if (stream === undefined) {
        reply.header('x-data-source', SNAPSHOT_SOURCE);
        return sendCached(request, reply, await load(symbols), PRIVATE);
      }
      stream.touch(symbols);
      const answer = stream.answer(symbols);
      if (answer !== undefined) {
        reply.header('x-data-source', STREAM_SOURCE);
        // Age counts from the newest tick (private answers never reach the hot path).
        const entry = makeEntry<BrokerQuotes>(answer.body, window, answer.newestTickAt || Date.now());
        return sendCached(request, reply, { entry, status: 'HIT' }, PRIVATE);
      }
      reply.header('x-data-source', SNAPSHOT_SOURCE);
      return sendCached(request, reply, await load(symbols), PRIVATE);
    },
  );
}
