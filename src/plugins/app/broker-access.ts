// The broker access rule (src/broker/broker-access.ts) at the edge: one hook, before CORS, on every route that
// declares `config.brokerData`, so that a refused browser gets no CORS grant (preflights included), a refused
// caller gets 403 BROKER_FORBIDDEN before any broker call or cache read, and every broker answer, refusals
// included, says what it varies on. The micro-cache (hot-path.ts) replays only public answers, so it never holds
// one of these.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { BrokerAccess, CallerFacts } from '../../broker/broker-access.js';
import type { StreamTickets } from '../../broker/stream-tickets.js';
import { ApiError } from '../../core/errors.js';
import { rawQueryParam } from './raw-query.js';

/** A route's broker data: always, or only for some requests (the stream, when it asks for broker topics). */
type BrokerDataScope = true | ((request: FastifyRequest) => boolean);

declare module 'fastify' {
  interface FastifyContextConfig {
    brokerData?: BrokerDataScope;
  }
}

/** What a broker answer depends on besides its URL: shared caches must not hand it to another caller. */
const BROKER_VARY = 'Origin, Authorization';

/** What the access rules judge a request by (the /mcp rule too, mcp-access.ts). */
export function callerFacts(request: FastifyRequest): CallerFacts {
  return {
    ip: request.ip,
    peer: request.raw.socket.remoteAddress,
    headers: request.headers,
    scheme: request.protocol,
    key: request.caller?.key,
  };
}

/**
 * Whether this caller is local: the broker rules admit it (BrokerAccess.isLocal). Such a caller sees the
 * service's private side (status's local view, errors in full words); any other, what the public may know.
 * Asked only where the answer differs by it.
 */
export function isLocalCaller(request: FastifyRequest): boolean {
  return request.server.deps.brokerAccess.isLocal(callerFacts(request));
}

function inScope(request: FastifyRequest): boolean {
  const scope = request.routeOptions.config.brokerData;
  return scope === true || scope?.(request) === true;
}

/** A one-time stream ticket in the query (EventSource cannot send a header). */
function ticketOf(request: FastifyRequest): string | undefined {
  const ticket = rawQueryParam(request, 'ticket');
  return typeof ticket === 'string' ? ticket : undefined;
}

export const brokerAccess = fp(
  async (app: FastifyInstance, options: { access: BrokerAccess; tickets: StreamTickets }) => {
    const { access, tickets } = options;
    app.addHook('onRequest', async function brokerAccess(request: FastifyRequest, reply: FastifyReply) {
      if (!inScope(request)) return;
      reply.header('vary', BROKER_VARY);
      const facts = callerFacts(request);
      const token = access.tokenAdmission(facts);
      if (token instanceof Error) throw token;
      const browser = access.browserRefusal(facts, token === 'token');
      if (browser !== undefined) throw browser;
      if (request.method === 'OPTIONS') {
        // Chrome's Private Network Access: a page outside the private network asks before reaching in.
        if (request.headers['access-control-request-private-network'] === 'true')
          reply.header('access-control-allow-private-network', 'true');
        return;
      }
      if (token === 'token') return;
      const ticket = ticketOf(request);
      if (ticket !== undefined && (await tickets.redeem(ticket))) return;
      const refusal = access.networkRefusal(facts);
      if (refusal === undefined) return;
      throw ticket === undefined
        ? refusal
        : new ApiError(
            'BROKER_FORBIDDEN',
            'this stream ticket is unknown, used or expired: get a new one from /api/broker/stream-ticket for each stream',
            {
              unauthenticated: true,
            },
          );
    });
  },
  { name: 'mdp-broker-access', fastify: '5.x', dependencies: ['mdp-caller-identity'] },
);
