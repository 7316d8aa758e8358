// A query parameter as the caller sent it, for hooks that run before the route's schema has validated the
// query (onRequest, the first preValidation step): parsed by Fastify, but of no known shape yet.
import type { FastifyRequest } from 'fastify';

export function rawQueryParam(request: FastifyRequest, name: string): unknown {
  const { query } = request;
  return typeof query === 'object' && query !== null ? Reflect.get(query, name) : undefined;
}
