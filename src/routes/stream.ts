// GET /api/stream?quote=IBM,MSFT&brokerQuotes=AAPL,SPY&overview=true&status=true: Server-Sent Events.
// Each event's data is the body the matching GET route answers (a quote's with its freshness, which the
// GET says in a header); one poller per topic serves every viewer (see src/stream/). Bad topics and limits
// answer the usual JSON error before the stream.
import { Type } from '@sinclair/typebox';
import type { FastifyContextConfig, FastifyInstance, FastifyPluginAsync } from 'fastify';
import { MAX_SYMBOLS } from '../core/symbol-list.js';
import { routePlugin } from './route-plugin.js';
import { streamCors } from '../plugins/external/cors.js';
import { errorResponses, type TypeBoxTypeProvider } from './schemas.js';
import { registerStreamMetrics } from '../plugins/app/operations-metrics.js';
import { rawQueryParam } from '../plugins/app/raw-query.js';
import { isLocalCaller } from '../plugins/app/broker-access.js';
import { StreamClient } from '../stream/stream-client.js';
import { type FeedFactory, StreamHub } from '../stream/stream-hub.js';
import { MAX_QUOTE_SYMBOLS, parseTopics } from '../stream/stream-topics.js';
import { TopicPoller } from '../stream/topic-poller.js';
import { withStreamedBrokerQuotes } from '../stream/streamed-quotes-feed.js';

/** How long a browser waits before reconnecting after the stream ends (the `retry:` hint). */
const RETRY_MS = 3_000;

const Querystring = Type.Object(
  {
    quote: Type.Optional(
      Type.String({
        maxLength: 400,
        description: `Provider-A quotes: comma-separated symbols, at most ${MAX_QUOTE_SYMBOLS}; one \`quote\` event per symbol.`,
        examples: ['IBM,MSFT'],
      }),
    ),
    brokerQuotes: Type.Optional(
      Type.String({
        maxLength: 2_000,
        description: `Broker quotes: comma-separated symbols, at most ${MAX_SYMBOLS}; one \`brokerQuotes\` event for the set.`,
        examples: ['AAPL,SPY'],
      }),
    ),
    overview: Type.Optional(Type.Boolean({ description: 'The market overview (`overview` events).' })),
    status: Type.Optional(Type.Boolean({ description: 'The service status (`status` events).' })),
    ticket: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'A one-time ticket from `/api/broker/stream-ticket`, for broker topics from outside BROKER_ALLOW_FROM when the client cannot send `Authorization: Bearer` (EventSource).',
      }),
    ),
  },
  { additionalProperties: false },
);

const DESCRIPTION = [
  'Server-Sent Events (`Accept: text/event-stream`, e.g. the browser `EventSource`). Topics in any combination on one connection.',
  'Events: `quote` (data = the `/api/provider-a/quote?symbol=` body, one per symbol, plus `freshness`: what its X-Data-Freshness header says, as an object), `brokerQuotes` (the `/api/broker/quotes?symbols=` body),',
  '`overview` (the `/api/market/overview` body), `status` (the `/api/system/status` body), and `error` (the error body plus `topic`, e.g.',
  '`quote=IBM`, when a topic cannot be served; the stream stays open), `shutdown` (the server is stopping: reconnect).',
  'The current value of every topic is sent at once on connect (and on a reconnect with `Last-Event-ID`), then an event only when it changes.',
  'Every event has an `id:`, `<ms since epoch when the upstream answered (streamed broker quotes: the newest tick)>-<sequence>`; the stream starts with a `retry:` hint and carries a comment every `STREAM_HEARTBEAT_SECONDS`.',
  "One upstream poll per topic serves every viewer (across replicas with Redis), at the cadence of the route's cache window;",
  "`brokerQuotes` instead pushes each change of the broker's real-time feed as it arrives (BROKER_STREAMING=auto), with snapshots while the feed cannot answer.",
  'A client that does not read gets only the latest value per topic and is disconnected after two heartbeat periods.',
  'Limits: `STREAM_MAX_CONNECTIONS` per server and `STREAM_MAX_PER_CLIENT` per caller (client key or address) answer 429 `RATE_LIMITED`.',
  "A topic's upstream calls are put to the accounts of the callers holding it (fair shares, `BUDGET_RESERVE`): a topic whose holders have all spent their share keeps its last value and is read again when a share returns, or, with nothing to show, sends an `error` event `CALLER_SHARE_SPENT`.",
].join(' ');

function localFeeds(app: FastifyInstance): FeedFactory {
  return (topic, deliver, holders) => {
    const poller = new TopicPoller(topic, app.liveTopics, deliver, app.deps.logger, holders);
    poller.start();
    return poller;
  };
}

const streamRoutes: FastifyPluginAsync = async (app) => {
  const { config, relay, brokerQuotes } = app.deps;
  const heartbeatMs = config.stream.heartbeatSeconds * 1000;
  const polled = relay === undefined ? localFeeds(app) : relay.feeds(localFeeds(app));
  const onPass = registerStreamMetrics(app.metrics.registry, () => hub.stats().connections, config.stream.maxConnections);
  const hub: StreamHub = new StreamHub({
    feeds: brokerQuotes === undefined ? polled : withStreamedBrokerQuotes(brokerQuotes, polled),
    heartbeatMs,
    maxConnections: config.stream.maxConnections,
    maxPerClient: config.stream.maxPerClient,
    onPass,
  });
  app.decorate('streamHub', hub);
  // Before Fastify stops accepting: streams end with a last event, so browsers reconnect elsewhere (the
  // relay closes with the other shared services, deps.close).
  app.addHook('preClose', async () => {
    hub.close();
  });

  // Broker topics are broker data: the access hook judges the caller (preflights included, so the route has its
  // own) and refuses every origin but the broker's pages before CORS is granted.
  const cors = streamCors(config.corsOrigins, app.deps.brokerAccess);
  const routeConfig: FastifyContextConfig = {
    brokerData: (request) => rawQueryParam(request, 'brokerQuotes') !== undefined,
    ...(cors === undefined ? {} : { cors }),
  };
  app.options('/api/stream', { config: routeConfig, schema: { hide: true } }, (_request, reply) => reply.callNotFound());
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/api/stream',
    {
      config: routeConfig,
      schema: {
        operationId: 'stream',
        summary: 'Live push of quotes, broker quotes, the overview and the status (Server-Sent Events)',
        description: DESCRIPTION,
        tags: ['stream'],
        querystring: Querystring,
        response: {
          200: {
            description: 'An event stream (`text/event-stream`) that stays open.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const topics = parseTopics(request.query, () => isLocalCaller(request));
      if (request.method === 'HEAD') return reply.header('cache-control', 'no-store').type('text/event-stream; charset=utf-8').send('');
      hub.admit(request.caller);
      reply.hijack();
      // Heartbeats keep the socket busy and blocked sockets are closed by the hub: no idle timeout.
      request.raw.socket.setTimeout(0);
      const client = new StreamClient(reply.raw, { caller: request.caller, slowClientMs: 2 * heartbeatMs, retryMs: RETRY_MS });
      client.open(reply.getHeaders() as Record<string, string | number | string[]>);
      const openedAt = Date.now();
      reply.raw.once('close', () => {
        hub.detach(client);
        // The reply is hijacked, so no request line is logged for a stream: this is its line.
        request.log.info(
          { topics: topics.map((t) => t.id), seconds: Math.round((Date.now() - openedAt) / 1000), dropped: client.dropped },
          'stream closed',
        );
      });
      hub.attach(client, topics);
    },
  );
};

// Not encapsulated: `app.streamHub` is visible on the root instance.
export default routePlugin('mdp-stream-routes', streamRoutes, { encapsulate: false });

declare module 'fastify' {
  interface FastifyInstance {
    streamHub: StreamHub;
  }
}
