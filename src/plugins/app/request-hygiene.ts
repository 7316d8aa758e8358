// Request hygiene for a read-only JSON API, once a request exists: a bounded URL, no request bodies on
// GET/HEAD, OPTIONS for CORS preflights only. Limits on the socket before a request exists are in
// server-limits.ts, the response headers every answer carries in edge-headers.ts.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { MAX_URL_LENGTH } from './server-limits.js';

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** @fastify/cors answers a malformed preflight in plain text: refuse it first, in the one error shape. */
export const preflightCheck = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', async function preflightCheck(request: FastifyRequest) {
      if (request.method !== 'OPTIONS') return;
      if (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined) {
        throw new ApiError('INVALID_PARAMETER', 'OPTIONS answers CORS preflights only: send Origin and Access-Control-Request-Method');
      }
    });
  },
  { name: 'mdp-preflight-check', fastify: '5.x', dependencies: ['mdp-closing-answer'] },
);

/** Over-long URLs and bodies on GET are refused before any route runs. */
export const requestHygiene = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', async function requestHygiene(request: FastifyRequest, reply: FastifyReply) {
      if (request.url.length > MAX_URL_LENGTH) {
        throw new ApiError('INVALID_PARAMETER', `the request URL is longer than ${MAX_URL_LENGTH} characters`);
      }
      if ((request.method === 'GET' || request.method === 'HEAD') && hasBody(request)) {
        // The body is never read: close rather than drain whatever the client keeps sending.
        reply.header('connection', 'close');
        throw new ApiError('INVALID_PARAMETER', `${request.method} requests take no body: send parameters in the query string`);
      }
    });
  },
  { name: 'mdp-request-hygiene', fastify: '5.x', dependencies: ['mdp-cors'] },
);
