// Who may use /mcp, and who may see and call its broker tools: the whole decision, one function each, on the
// rules the broker routes already have (src/broker/broker-access.ts, src/core/web-origins.ts).
//  - An Origin, when one is sent, must be the service's own, a loopback page's, or one MCP_ORIGINS lists:
//    CORS_ORIGINS, the market routes' list (`*` by default), never opens /mcp.
//  - With MCP_TOKEN set, every request sends it (or BROKER_TOKEN, the stronger credential, or a client key with the
//    `mcp` scope: CLIENT_KEYS) as a bearer token.
//  - A request no token admits must name the service in its Host (an address, a localhost name, a host of
//    MCP_ORIGINS): a page whose own name was rebound to the service's address (DNS rebinding) sends its name,
//    and is same-origin to itself, so no Origin check would see it.
//  - The broker tools are for the callers the broker routes admit: BROKER_ALLOW_FROM's networks judged under
//    TRUST_PROXY, BROKER_TOKEN or a client key with the `broker` scope, and the broker's own web origins and Host rule.
// The hook runs before CORS and before the body is read: a refused page gets 403 and nothing else.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { BrokerAccess, CallerFacts } from '../../broker/broker-access.js';
import { bearerToken, sameSecret } from '../../core/bearer.js';
import type { Config } from '../../core/config.js';
import { ApiError } from '../../core/errors.js';
import { LOOPBACK_ORIGINS, WebOrigins } from '../../core/web-origins.js';
import { callerFacts } from './broker-access.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** One of /mcp's routes: the access hook judges every request to it. */
    mcp?: true;
  }
  interface FastifyInstance {
    mcpAccess: McpAccess;
  }
}

/** The decision itself, on a request's facts; exported for its own tests. @internal */
export class McpAccess {
  private readonly origins: WebOrigins;

  constructor(
    private readonly mcp: Config['mcp'],
    private readonly broker: BrokerAccess,
  ) {
    this.origins = new WebOrigins([...LOOPBACK_ORIGINS, ...mcp.origins]);
  }

  /** Whether a page at `origin` may be granted CORS on /mcp (the service's own pages need none). */
  allowsOrigin(origin: string): boolean {
    return this.origins.allows(origin);
  }

  /**
   * May this request use /mcp: undefined, or its refusal (403 for a page or a name, 401 for a token). A CORS
   * preflight carries no Authorization (browsers strip it), so it is judged by its page alone.
   */
  refusal(facts: CallerFacts, preflight = false): ApiError | undefined {
    const origin = header(facts.headers, 'origin');
    const host = header(facts.headers, 'host');
    const listed = origin !== undefined && this.origins.allows(origin);
    if (origin !== undefined && !listed && !this.origins.isOwnOrigin(origin, host, facts.scheme))
      return forbidden(`web pages of ${origin.slice(0, 100)} may not use /mcp: add that origin to MCP_ORIGINS if the page is yours`);
    const token = this.tokenAdmission(facts, preflight);
    if (token instanceof ApiError) return token;
    // A bearer token is not something a rebound page holds, and a listed page is not a rebound one.
    if (!token && !listed && !this.origins.isOwnHost(host))
      return forbidden(
        '/mcp is served only through an address, a localhost name or a host of MCP_ORIGINS (this Host header is none of these): add the name this service is reached by to MCP_ORIGINS, or set MCP_TOKEN',
      );
    return undefined;
  }

  /**
   * May it see and call the broker tools (and hear the service's private side: the status's local view, errors'
   * full words): undefined when the broker rules admit it (BrokerAccess.isLocal), else why not, as the broker
   * routes would refuse it.
   */
  brokerRefusal(facts: CallerFacts): ApiError | undefined {
    // MCP_TOKEN admitted the request to /mcp: the broker judges it as a caller that sent no token.
    const judged = this.isMcpToken(facts) ? { ...facts, headers: { ...facts.headers, authorization: undefined } } : facts;
    const token = this.broker.tokenAdmission(judged);
    if (token instanceof ApiError) return token;
    return this.broker.browserRefusal(judged, token === 'token') ?? (token === 'token' ? undefined : this.broker.networkRefusal(judged));
  }

  /**
   * true for MCP_TOKEN, BROKER_TOKEN or a client key (the caller identity hook has refused one without the `mcp`
   * scope); an error for a missing or wrong one when MCP_TOKEN is set (a preflight sends none).
   */
  private tokenAdmission(facts: CallerFacts, preflight: boolean): boolean | ApiError {
    if (facts.key !== undefined) return true;
    if (this.isMcpToken(facts) || this.broker.tokenAdmission(facts) === 'token') return true;
    if (this.mcp.token === undefined) return false;
    const sent = header(facts.headers, 'authorization') !== undefined;
    if (!sent && preflight) return false;
    return new ApiError(
      'MCP_FORBIDDEN',
      sent ? 'the Authorization header is not Bearer <MCP_TOKEN>' : 'send Authorization: Bearer <MCP_TOKEN>',
      {
        unauthenticated: true,
        headers: { 'www-authenticate': sent ? 'Bearer realm="mcp", error="invalid_token"' : 'Bearer realm="mcp"' },
      },
    );
  }

  private isMcpToken(facts: CallerFacts): boolean {
    const given = bearerToken(header(facts.headers, 'authorization'));
    return this.mcp.token !== undefined && given !== undefined && sameSecret(given, this.mcp.token);
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function forbidden(message: string): ApiError {
  return new ApiError('MCP_FORBIDDEN', message);
}

/** Every request to a route declaring `config.mcp` is judged here, before CORS answers or grants anything. */
export const mcpAccess = fp(
  async (app: FastifyInstance) => {
    const access = new McpAccess(app.deps.config.mcp, app.deps.brokerAccess);
    app.decorate('mcpAccess', access);
    app.addHook('onRequest', async function mcpAccess(request: FastifyRequest) {
      if (request.routeOptions.config.mcp !== true) return;
      const refusal = access.refusal(callerFacts(request), request.method === 'OPTIONS');
      if (refusal !== undefined) throw refusal;
    });
  },
  { name: 'mdp-mcp-access', fastify: '5.x', dependencies: ['mdp-broker-access'], decorators: { fastify: ['deps'] } },
);
