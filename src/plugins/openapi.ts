// The OpenAPI 3.1 document, generated from the same route schemas that validate requests and serialise
// responses, served at /api/openapi.json, with browsable docs at /api/docs (assets from node_modules:
// no network). Registered before the route plugins so every route is seen.
import type {} from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export const API_VERSION = '1.0.0';

const DESCRIPTION = [
  'Read-only JSON market data: quotes and technical indicators (provider A), dividends (provider B), a market',
  'overview, and a brokerage connection, behind one cache and an upstream call budget.',
  '',
  'Every error has one body: `{ "error": { "code", "message", "status", "requestId" } }` (schema `ErrorResponse`).',
  'Cached responses carry `X-Cache: HIT|MISS|STALE`, `Age`, `Cache-Control` and `ETag` (send `If-None-Match` for a 304).',
  'Every response carries `X-Request-Id` and `X-Data-Mode` (`sandbox` or `live`).',
].join('\n');

const TAGS = [
  { name: 'provider-a', description: 'Quotes and technical indicators (5 upstream calls per minute, 500 per day by default).' },
  { name: 'provider-b', description: 'Dividends.' },
  { name: 'market', description: 'Market overview: indices, commodities and crypto.' },
  { name: 'broker', description: 'Brokerage connection (local proxy).' },
  { name: 'stream', description: 'Live push (Server-Sent Events): one connection for every topic a page shows.' },
  { name: 'system', description: 'Status, liveness and readiness. Never rate limited; never calls an upstream.' },
];

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Market Data Proxy', version: API_VERSION, description: DESCRIPTION },
      tags: TAGS,
    },
    // Shared schemas keep their $id as their component name (ErrorResponse, not def-0).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transformObject: (document) => {
      const { openapiObject } = document as { openapiObject: Record<string, unknown> };
      return optionalWhenDefaulted(collapseLiteralUnions(openapiObject) as Record<string, unknown>) as typeof openapiObject;
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
export function collapseLiteralUnions(node: unknown): unknown {
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
export function optionalWhenDefaulted(document: Record<string, unknown>): Record<string, unknown> {
  const paths = (document.paths ?? {}) as Record<string, Record<string, { parameters?: { required?: boolean; schema?: { default?: unknown } }[] }>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) if (parameter.schema?.default !== undefined) parameter.required = false;
    }
  }
  return document;
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
export function docsCsp(header: string): string {
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
