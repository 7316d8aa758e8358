// POST /mcp: the Model Context Protocol's Streamable HTTP transport (the official SDK's, protocol 2025-11-25 and the
// earlier versions it negotiates), for AI agents, over the same services, cache, budgets and broker rules as the
// REST routes (docs/explanation/agents-share-the-cache.md).
//
// Stateless: every request gets its own SDK server and transport and is answered in JSON, so any replica answers
// any request behind a load balancer without sticky sessions, and the embedded store needs nothing more. No
// session, so no server-sent stream: GET and DELETE answer 405, as the transport specification says a server
// without them does. A tool runs inside this request's handler (never a queue or a timer), so whatever the request
// carries in its asynchronous context (the caller a provider call is charged to) reaches the tool's reads.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { callerFacts } from '../../plugins/app/broker-access.js';
import { mcpCors } from '../../plugins/external/cors.js';
import { buildSystemStatus } from '../../services/system-status.js';
import { routePlugin } from '../route-plugin.js';
import { ErrorResponse, errorResponses } from '../schemas.js';
import { statusSources } from '../system/status-sources.js';
import { mcpServer } from './mcp-server.js';

/** A JSON-RPC message is small; a tool call's arguments a few hundred bytes (the service's default is 1 KiB). */
const BODY_LIMIT = 64 * 1024;

/** The headers the SDK's transport reads of a request; the rest stay with Fastify. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;

/** A string or an integer. Untyped on purpose: Fastify's validation coerces types, and an id must come back as it was sent. */
const RequestId = Type.Unsafe<string | number>({ description: 'The request id (a string or an integer), echoed in the answer.' });

const Message = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(RequestId),
    method: Type.Optional(Type.String({ examples: ['initialize', 'tools/list', 'tools/call', 'ping'] })),
    params: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  {
    additionalProperties: true,
    description: 'A JSON-RPC 2.0 request or notification of the Model Context Protocol (docs/reference/mcp-tools.md).',
  },
);

const Answer = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(Type.Union([RequestId, Type.Null()])),
    result: Type.Optional(Type.Object({}, { additionalProperties: true })),
    error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String() }, { additionalProperties: true })),
  },
  { additionalProperties: false, description: 'The JSON-RPC response: a result, or an error (unknown method or tool, bad message).' },
);

/** The SDK's transport as a web Request: the headers it reads; the body is the one Fastify parsed. */
function transportRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request('http://service/mcp', { method: 'POST', headers });
}

const mcpRoutes: FastifyPluginAsync = async (app: FastifyInstance) => {
  const startedAt = new Date();
  const { deps } = app;
  const config = { mcp: true as const, cors: mcpCors((origin) => app.mcpAccess.allowsOrigin(origin)) };
  app.decorateRequest('mcpTool', undefined);

  // The route's own preflight, so that CORS answers it with /mcp's policy rather than the market one.
  app.options('/mcp', { config, schema: { hide: true } }, (_request, reply) => reply.callNotFound());
  app.post(
    '/mcp',
    {
      config,
      bodyLimit: BODY_LIMIT,
      schema: {
        operationId: 'mcp',
        summary: 'MCP server for AI agents (Streamable HTTP, stateless)',
        description:
          "The Model Context Protocol over Streamable HTTP, protocol 2025-11-25 (2025-06-18 negotiated too): initialize, tools/list, tools/call, ping. Stateless, answered in JSON; no session, so GET and DELETE answer 405. The tools read through the REST routes' services, cache and budgets; the broker tools are listed for callers the broker rules admit only. The tools: docs/reference/mcp-tools.md. Send `Accept: application/json, text/event-stream`.",
        tags: ['mcp'],
        body: Message,
        security: [{}, { mcpToken: [] }],
        response: {
          200: Answer,
          202: Type.Null({ description: 'A notification (or a response) accepted. No body.' }),
          ...errorResponses(400, 429),
          401: Type.Ref(ErrorResponse, {
            description: 'MCP_FORBIDDEN: MCP_TOKEN is set, and the request sent no bearer token or a wrong one.',
          }),
          403: Type.Ref(ErrorResponse, {
            description:
              'MCP_FORBIDDEN: a web page of an origin /mcp does not allow, or a Host header that does not name this service (DNS rebinding).',
          }),
          406: Type.Object(Answer.properties, {
            description: 'The Accept header lacks application/json or text/event-stream: a JSON-RPC error.',
          }),
        },
      },
    },
    async (request, reply) => {
      // Read once, when a message first needs it (an initialize or a ping does not).
      let refusal: ApiError | undefined | null = null;
      const brokerRefusal = () => {
        if (refusal === null) refusal = app.mcpAccess.brokerRefusal(callerFacts(request));
        return refusal;
      };
      const local = () => brokerRefusal() === undefined;
      const server = mcpServer({
        context: { deps, local, status: () => buildSystemStatus(statusSources(app, startedAt), local() ? 'local' : 'public') },
        brokerRefusal,
        maxResultBytes: deps.config.mcp.maxResultBytes,
        record: (tool, outcome, seconds) => {
          app.metrics.mcp.record(tool, outcome, seconds);
          request.mcpTool = request.mcpTool === undefined ? tool : `${request.mcpTool},${tool}`;
        },
        failed: (error) => request.log.error({ err: error }, 'MCP tool failed'),
      });
      // They live as long as this request, and are not closed: close() rejects what is still pending (nothing, once
      // answered) with an error and its stack, which cost several times the whole transport per request (profiled).
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      const response = await transport.handleRequest(transportRequest(request), { parsedBody: request.body });
      reply.code(response.status as 200).header('cache-control', 'no-store');
      response.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      const body = await response.text();
      return body === '' ? reply.send() : reply.send(body);
    },
  );

  const noStream = async () => {
    throw new ApiError('METHOD_NOT_ALLOWED', '/mcp is stateless: it holds no session and opens no event stream; send JSON-RPC with POST', {
      headers: { allow: 'POST, OPTIONS' },
    });
  };
  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: '/mcp', config, schema: { hide: true }, handler: noStream });
};

export default routePlugin('mdp-mcp-routes', mcpRoutes);
