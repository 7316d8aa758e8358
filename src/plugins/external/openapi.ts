// The OpenAPI 3.1 document, generated from the same route schemas that validate requests and serialise
// responses, served at /api/openapi.json, with browsable docs at /api/docs (assets from node_modules:
// no network). Registered before the route plugins so every route is seen.
import fp from 'fastify-plugin';
import type {} from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { scopesFor } from '../../core/caller.js';
import { limitedRoute } from './rate-limit.js';

const API_VERSION = '1.0.0';

const DESCRIPTION = [
  'Read-only JSON market data: quotes and technical indicators (provider A), dividends (provider B), a market',
  'overview, and a brokerage connection, behind one cache and an upstream call budget.',
  '',
  'Every error has one body: `{ "error": { "code", "message", "status", "requestId" } }` (schema `ErrorResponse`).',
  'Cached responses carry `X-Cache: HIT|MISS|STALE`, `Age`, `Cache-Control` and `ETag` (send `If-None-Match` for a 304).',
  'Every response carries `X-Request-Id` and `X-Data-Mode` (`sandbox` or `live`); the response headers are components.',
  'Every parameter value is trimmed of surrounding spaces before it is validated; a value holding a control, zero-width, no-break or direction character is `400 INVALID_PARAMETER` naming the parameter and the character.',
  'Integer parameters are plain decimal digits (`14`, not `+14`, `1e1` or `14.0`). Enums marked `x-case-insensitive` are matched in any letter case.',
  'Connection-level errors, answered before a route is known: `408 REQUEST_TIMEOUT`, `431 HEADERS_TOO_LARGE`, and `400 INVALID_PARAMETER` for a path that is not valid percent-encoding.',
  'Any route answers `503 SHUTTING_DOWN` (with `Retry-After: 1` and `Connection: close`) while the instance drains: retry, and another replica answers.',
  'Quote and technical answers carry `X-Data-Source: alpha-vantage|yahoo`: the source that produced the values; broker quotes carry `X-Data-Source: broker-stream|broker-snapshot`.',
  "Every price says how fresh it is (schema `Freshness`: realtime, delayed, end-of-day, frozen, prior-close, halted or unknown, as of when): a `freshness` field on broker quotes, positions and overview entries, and `X-Data-Freshness` on Alpha Vantage-shaped quote and time series answers, whose bodies stay the provider's.",
].join('\n');

const TAGS = [
  { name: 'provider-a', description: 'Quotes and technical indicators (5 upstream calls per minute, 500 per day by default).' },
  { name: 'provider-b', description: 'Dividends.' },
  { name: 'market', description: 'Market overview: indices, commodities and crypto.' },
  { name: 'broker', description: 'Brokerage connection (local proxy).' },
  { name: 'stream', description: 'Live push (Server-Sent Events): one connection for every topic a page shows.' },
  { name: 'system', description: 'Status, liveness and readiness. Never rate limited; never calls an upstream.' },
  { name: 'mcp', description: 'The Model Context Protocol for AI agents: the same data, cache and budgets as tools.' },
];

/** package.json's `UNLICENSED`: the project grants no licence (yet), which the document says plainly. */
const LICENSE = { name: 'No licence granted (all rights reserved)', identifier: 'LicenseRef-All-Rights-Reserved' };

const SECURITY_SCHEMES = {
  brokerToken: {
    type: 'http' as const,
    scheme: 'bearer',
    description:
      'BROKER_TOKEN (16+ characters), for broker data from outside the networks BROKER_ALLOW_FROM lists (loopback and private networks by default). Callers on those networks send none; a wrong token is 401.',
  },
  clientKey: {
    type: 'http' as const,
    scheme: 'bearer',
    description:
      'A client key (CLIENT_KEYS): the caller is then that client, with its own share of the provider budgets and its own rate limit. Optional: without one the caller is known by its address. A wrong key is 401 INVALID_CLIENT_KEY, a key used beyond its scopes 403 CLIENT_KEY_FORBIDDEN.',
  },
  mcpToken: {
    type: 'http' as const,
    scheme: 'bearer',
    description:
      'MCP_TOKEN (16+ characters): when set, /mcp answers only the bearer of it (or of BROKER_TOKEN); a missing or wrong one is 401. Unset: none needed.',
  },
  metricsToken: {
    type: 'http' as const,
    scheme: 'bearer',
    description: 'METRICS_TOKEN: /metrics answers on the public port only to this token (404 otherwise, as for any unknown path).',
  },
};

/**
 * Who may call an operation, from what the access rule enforces rather than a copy of it: a route that
 * declares broker data (`config.brokerData`, judged by plugins/app/broker-access.ts) takes an optional bearer
 * token (`{}`: none needed on an allowed network); a route where a client key makes the caller that client
 * (caller.ts `scopesFor`) takes one, optionally; a route that states its own requirement keeps it; the system routes
 * need nothing.
 */
function securityOf(url: string, config: { brokerData?: unknown } | undefined): Record<string, string[]>[] {
  const keyed = scopesFor(url) === undefined ? [] : [{ clientKey: [] }];
  const broker = config?.brokerData === undefined ? [] : [{ brokerToken: [] }];
  return keyed.length + broker.length === 0 ? [] : [{}, ...keyed, ...broker];
}

/** @fastify/swagger and its UI; registered before the routes (they declare it), so the document sees every one. */
export const openApi = fp(async (app: FastifyInstance) => registerOpenApi(app), { name: 'mdp-openapi', fastify: '5.x' });

async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Market Data Proxy', version: API_VERSION, description: DESCRIPTION, license: LICENSE },
      // Relative: the paths are on whatever host and scheme served this document.
      servers: [{ url: '/', description: 'This service' }],
      tags: TAGS,
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    transform: ({ schema, url, route }) => ({ schema: { ...schema, security: schema?.security ?? securityOf(url, route.config) }, url }),
    // Shared schemas keep their $id as their component name (ErrorResponse, not def-0).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transformObject: (document) => {
      const { openapiObject } = document as { openapiObject: Record<string, unknown> };
      return documentHeaders(
        optionalWhenDefaulted(collapseLiteralUnions(openapiObject) as Record<string, unknown>),
      ) as typeof openapiObject;
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    // No validator badge: it would call validator.swagger.io.
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true, validatorUrl: null },
    staticCSP: true,
    transformStaticCSP: docsCsp,
  });
  app.get('/api/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async (_request, reply) => {
    return reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8').send(documentText(app));
  });
}

/**
 * TypeBox writes a union of literals as `anyOf: [{ type, enum: [one] }, ...]`; the docs show that as an
 * opaque "any of". One `enum` lists the allowed values plainly and validates the same values.
 */
function collapseLiteralUnions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(collapseLiteralUnions);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = collapseLiteralUnions(value);
  const options = out.anyOf;
  if (Array.isArray(options) && options.length > 0 && options.every(isSingleEnum)) {
    const types = new Set(options.map((o) => o.type));
    if (types.size === 1) {
      delete out.anyOf;
      return { ...out, type: options[0]!.type, enum: options.map((o) => o.enum[0]) };
    }
  }
  return out;
}

/** A query parameter with a default is filled in by validation, so a caller never has to send it. */
function optionalWhenDefaulted(document: Record<string, unknown>): Record<string, unknown> {
  const paths = (document.paths ?? {}) as Record<
    string,
    Record<string, { parameters?: { required?: boolean; schema?: { default?: unknown } }[] }>
  >;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) if (parameter.schema?.default !== undefined) parameter.required = false;
    }
  }
  return document;
}

const integer = { type: 'integer', minimum: 0 };

/** The response headers, documented once as components and referenced by every response that carries them. */
const RESPONSE_HEADERS: Record<string, { description: string; required?: boolean; schema: Record<string, unknown> }> = {
  'X-Request-Id': {
    description:
      "The caller's X-Request-Id when it is 1-64 letters, digits or `._:-`, else a generated UUID; names the request in the log.",
    required: true,
    schema: { type: 'string', pattern: '^[\\w.:-]{1,64}$' },
  },
  'X-Data-Mode': {
    description: 'sandbox (simulated upstreams) or live.',
    required: true,
    schema: { type: 'string', enum: ['sandbox', 'live'] },
  },
  'X-Cache': {
    description:
      'HIT (fresh from the cache), MISS (fetched for this request) or STALE (past its fresh window: served while one refresh runs, or while the upstream fails).',
    required: true,
    schema: { type: 'string', enum: ['HIT', 'MISS', 'STALE'] },
  },
  Age: { description: 'Seconds since the upstream answered (RFC 9111).', required: true, schema: integer },
  ETag: {
    description: 'Tag of the body; send it in If-None-Match to get a 304 while it is current.',
    required: true,
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description:
      '`public, max-age=<fresh window>, stale-while-revalidate=<stale window>, stale-if-error=<stale window>`; max-age counts from the upstream answer (subtract Age).',
    required: true,
    schema: { type: 'string', pattern: '^public, max-age=\\d+, stale-while-revalidate=\\d+, stale-if-error=\\d+$' },
  },
  'Cache-Control-Private': {
    description:
      "Broker data: `private, max-age=<fresh window>, stale-while-revalidate=<stale window>, stale-if-error=<stale window>`. The caller's browser may keep it; no shared cache (a proxy, a CDN) may.",
    required: true,
    schema: { type: 'string', pattern: '^private, max-age=\\d+, stale-while-revalidate=\\d+, stale-if-error=\\d+$' },
  },
  Vary: {
    description: 'Broker data depends on who asks: `Origin, Authorization` (on every broker data answer, errors included).',
    required: true,
    schema: { type: 'string', pattern: '^Origin, Authorization' },
  },
  'Retry-After': { description: 'Seconds until a retry can succeed.', schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Limit': { description: 'Requests this caller may make per minute (absent when RATE_LIMIT_PER_MINUTE=0).', schema: integer },
  'X-RateLimit-Remaining': { description: 'Requests left to this caller in the current minute.', schema: integer },
  'X-RateLimit-Reset': { description: 'Seconds until the current minute window ends.', schema: integer },
  'X-Data-Source': {
    description:
      "Who produced the values: alpha-vantage (provider A), or yahoo when provider A could not answer and QUOTE_FALLBACK=yahoo (on /query: on GLOBAL_QUOTE and indicator answers); on broker quotes, broker-stream (the broker's real-time feed, no broker call) or broker-snapshot (a snapshot call, or its cached answer).",
    schema: { type: 'string', enum: ['alpha-vantage', 'yahoo', 'broker-stream', 'broker-snapshot'] },
  },
  'X-Data-Freshness': {
    description:
      "How fresh the prices of this Alpha Vantage-shaped body are (the `Freshness` schema, in a header so the body stays the provider's byte for byte): `<kind>[; minutes=<delay>]; as-of=<ISO 8601>`, e.g. `delayed; minutes=15; as-of=2026-04-28T19:59:00.000Z` or `end-of-day; as-of=2026-04-27`. Provider A: its plan (ALPHA_VANTAGE_ENTITLEMENT; unset: end-of-day); the Yahoo fallback: the chart's regularMarketTime against its trading periods.",
    schema: {
      type: 'string',
      pattern: '^(realtime|delayed|end-of-day|frozen|prior-close|halted|unknown)(; minutes=\\d+)?; as-of=\\d{4}-\\d{2}-\\d{2}\\S*$',
    },
  },
  'X-Partial': {
    description: 'Instruments left out of this overview (comma-separated), when some failed with nothing cached.',
    schema: { type: 'string' },
  },
};

const CACHED = ['X-Cache', 'Age', 'ETag', 'Cache-Control'];
/** Routes whose answers are one caller's broker data (config.brokerData): private, and varying by caller. */
const BROKER_DATA = new Set(['/api/broker/accounts', '/api/broker/positions', '/api/broker/quotes', '/api/broker/stream-ticket']);
const RATE_LIMITED = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
const SOURCED = ['X-Data-Source'];
const ROUTE_HEADERS: Record<string, string[]> = {
  '/api/market/overview': ['X-Partial'],
  '/api/provider-a/quote': [...SOURCED, 'X-Data-Freshness'],
  '/api/provider-a/technical': SOURCED,
  // X-Data-Freshness on GLOBAL_QUOTE and TIME_SERIES_* answers, which carry prices.
  '/api/provider-a/query': [...SOURCED, 'X-Data-Freshness'],
  '/api/provider-a/daily': ['X-Data-Freshness'],
  '/api/broker/quotes': SOURCED,
};

type Responses = Record<string, { headers?: Record<string, unknown> }>;

/** Which documented headers each response carries: by route family, status, and whether the route is cached (declares a 304). */
function documentHeaders(document: Record<string, unknown>): Record<string, unknown> {
  const paths = (document.paths ?? {}) as Record<string, Record<string, { responses?: Responses }>>;
  for (const [path, operations] of Object.entries(paths)) {
    const limited = limitedRoute(path);
    for (const { responses = {} } of Object.values(operations)) {
      const cached = '304' in responses;
      for (const [status, response] of Object.entries(responses)) {
        const names = ['X-Request-Id', 'X-Data-Mode', ...(limited ? RATE_LIMITED : [])];
        if (status === '429' || status === '503') names.push('Retry-After');
        if (cached && (status === '200' || status === '304')) names.push(...CACHED);
        if (status === '200') names.push(...(ROUTE_HEADERS[path] ?? []));
        const broker = BROKER_DATA.has(path);
        if (broker) names.push('Vary');
        const component = (name: string) => (broker && name === 'Cache-Control' ? 'Cache-Control-Private' : name);
        response.headers = {
          ...response.headers,
          ...Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${component(name)}` }])),
        };
      }
    }
  }
  const components = (document.components ?? {}) as Record<string, unknown>;
  return { ...document, components: { ...components, headers: RESPONSE_HEADERS } };
}

function isSingleEnum(value: unknown): value is { type: string; enum: [unknown] } {
  if (value === null || typeof value !== 'object') return false;
  const keys = Object.keys(value);
  const v = value as { type?: unknown; enum?: unknown };
  return keys.length === 2 && typeof v.type === 'string' && Array.isArray(v.enum) && v.enum.length === 1;
}

/**
 * The plugin's own policy, made to work offline and over plain HTTP: Swagger UI sets inline styles at run
 * time (blocked while style-src lists hashes), and upgrade-insecure-requests breaks HTTP on a LAN address.
 */
function docsCsp(header: string): string {
  return header
    .split(';')
    .map((directive) => directive.trim())
    .filter((directive) => directive !== '' && directive !== 'upgrade-insecure-requests')
    .map((directive) => {
      if (directive.startsWith('style-src ')) return "style-src 'self' 'unsafe-inline'";
      if (directive.startsWith('font-src ')) return "font-src 'self' data:";
      if (directive.startsWith('img-src ')) return "img-src 'self' data:";
      return directive;
    })
    .concat("connect-src 'self'")
    .join('; ');
}

const documents = new WeakMap<FastifyInstance, string>();

/** The document only changes when routes change, which they do not after start. */
function documentText(app: FastifyInstance): string {
  let text = documents.get(app);
  if (text === undefined) {
    text = JSON.stringify(app.swagger());
    documents.set(app, text);
  }
  return text;
}
