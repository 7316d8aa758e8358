// Request hygiene for a read-only JSON API, once a request exists: the Host header HTTP/1.1 requires, a
// bounded URL, no request bodies on GET/HEAD, OPTIONS for CORS preflights only. Limits on the socket before a
// request exists are in server-limits.ts, the response headers every answer carries in edge-headers.ts.
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { MAX_URL_LENGTH } from './server-limits.js';

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * An HTTP/1.1 (or later) request without Host (RFC 9112 §3.2: the server must answer 400). Node would answer
 * it itself, with an empty chunked body and no request id; the server is built without that check
 * (`requireHostHeader: false`, app.ts) so that the answer is the service's own.
 */
export function lacksHost(req: IncomingMessage): boolean {
  return req.headers.host === undefined && (req.httpVersionMajor > 1 || req.httpVersionMinor > 0);
}

/** The first check after the closing one, so that no other rule (broker access, CORS) judges a request that lacks Host. */
export const hostRequired = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', async function hostRequired(request: FastifyRequest, reply: FastifyReply) {
      if (!lacksHost(request.raw)) return;
      // As Node closes it: a client that leaves out Host may frame the rest of its requests as badly.
      reply.header('connection', 'close');
      throw new ApiError('INVALID_PARAMETER', `an HTTP/${request.raw.httpVersion} request must carry a Host header`);
    });
  },
  { name: 'mdp-host-required', fastify: '5.x', dependencies: ['mdp-closing-answer'] },
);

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
  { name: 'mdp-preflight-check', fastify: '5.x', dependencies: ['mdp-host-required'] },
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
