// GET /api/broker/quotes?symbols=A,B,C -> { quotes: { A: {...} }, missing: [...] }. Up to 50 symbols. While
// the broker's quotes stream (BROKER_STREAMING=auto and a broker with a feed), the symbols asked for are
// subscribed (and stay so for a while after the request), and a request the stream can answer whole is
// answered from it without a broker call (X-Data-Source: broker-stream). Otherwise a snapshot, cached
// under the sorted distinct list so concurrent identical requests cost one broker call
// (X-Data-Source: broker-snapshot); its answer completes the stream's quotes that lack fields
// (services/broker-service.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { errorResponses, NOT_MODIFIED, type TypeBoxTypeProvider } from '../schemas.js';
import { sendSourced } from '../../plugins/app/send-cached.js';
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

export function quotesRoute(app: FastifyInstance, { brokerData }: Pick<AppDeps, 'brokerData'>): void {
  app.liveTopics.provide('brokerQuotes', async (list, { revalidate }) => brokerData.snapshot(list.split(','), { revalidate }));
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
    async (request, reply) => sendSourced(request, reply, await brokerData.quotes(parseSymbolList(request.query.symbols)), PRIVATE),
  );
}
