// @fastify/cors as configured: market data for the origins CORS_ORIGINS lists (`*` by default), broker data only
// for the pages BROKER_CORS_ORIGINS lists. The market policy is registered once for every route; a broker route
// overrides the origin in its own config (`brokerCors`), which @fastify/cors merges per route, so market answers
// carry no `Vary: Origin` they do not need and a shared cache keeps one copy of each.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { BrokerAccess } from '../../broker/broker-access.js';
import type { Config } from '../../core/config.js';

/** Every response header a browser script may need to read: the one list, sent on every CORS answer. */
const EXPOSED_HEADERS = [
  'X-Cache',
  'Age',
  'Cache-Control',
  'ETag',
  'Retry-After',
  'X-Data-Mode',
  'X-Data-Source',
  'X-Data-Freshness',
  'X-Request-Id',
  'X-Partial',
  'Allow',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

type OriginCallback = (error: Error | null, allow: boolean) => void;

/** A route's own CORS rule (its origins, and its methods and headers where they differ), merged by @fastify/cors over the market policy. */
export interface RouteCors {
  origin: (origin: string | undefined, callback: OriginCallback) => void;
  methods?: string[];
  allowedHeaders?: string[];
  exposedHeaders?: string[];
}

/** Broker routes: the listed pages only (the broker access hook has already refused every other origin). */
export function brokerCors(access: BrokerAccess): RouteCors {
  return { origin: (origin, callback) => callback(null, origin !== undefined && access.allowsOrigin(origin)) };
}

/**
 * /mcp: loopback pages and MCP_ORIGINS only (the access hook has refused every other origin), never CORS_ORIGINS;
 * a JSON-RPC POST with the headers the MCP transport sends.
 */
export function mcpCors(allowsOrigin: (origin: string) => boolean): RouteCors {
  return {
    origin: (origin, callback) => callback(null, origin !== undefined && allowsOrigin(origin)),
    methods: ['POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'],
    exposedHeaders: [
      'Mcp-Session-Id',
      'WWW-Authenticate',
      'Retry-After',
      'X-Request-Id',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ],
  };
}

/**
 * The stream, which serves both: with CORS_ORIGINS `*` the market policy as it is (the access hook has refused
 * every other origin before a broker topic is granted), else an origin either list names.
 */
export function streamCors(corsOrigins: Config['corsOrigins'], access: BrokerAccess): RouteCors | undefined {
  if (corsOrigins === '*') return undefined;
  return {
    origin: (origin, callback) => callback(null, origin !== undefined && (corsOrigins.includes(origin) || access.allowsOrigin(origin))),
  };
}

/**
 * Access-Control-Allow-Origin of a market answer, for the hot path, which answers without the plugin: under a
 * list, the request's Origin when the list holds it exactly, else none (@fastify/cors 11, index.js
 * getAccessControlAllowOriginHeader over the same list; the parity test holds the two together). Undefined
 * under `*`, whose `*` is the same for every request.
 */
export function marketAllowOrigin(corsOrigins: Config['corsOrigins']): ((origin: string | undefined) => string | undefined) | undefined {
  if (corsOrigins === '*') return undefined;
  const allowed = new Set(corsOrigins);
  return (origin) => (origin !== undefined && allowed.has(origin) ? origin : undefined);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Read by @fastify/cors per route, over the options it was registered with. */
    cors?: RouteCors | false;
  }
}

export const corsPlugin = fp(
  async (app: FastifyInstance) => {
    const { corsOrigins } = app.deps.config;
    await app.register(cors, {
      origin: corsOrigins === '*' ? '*' : corsOrigins,
      methods: ['GET', 'HEAD', 'OPTIONS'],
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
    });
  },
  { name: 'mdp-cors', fastify: '5.x', dependencies: ['mdp-mcp-access'], decorators: { fastify: ['deps'] } },
);
