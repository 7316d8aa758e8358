// @fastify/cors as configured (CORS_ORIGINS), after the preflight check that gives malformed preflights the
// one error shape.
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Every response header a browser script may need to read: the one list, sent on every CORS answer. */
export const EXPOSED_HEADERS = [
  'X-Cache',
  'Age',
  'Cache-Control',
  'ETag',
  'Retry-After',
  'X-Data-Mode',
  'X-Data-Source',
  'X-Request-Id',
  'X-Partial',
  'Allow',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

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
  { name: 'mdp-cors', fastify: '5.x', dependencies: ['mdp-preflight-check'], decorators: { fastify: ['deps'] } },
);
