// Request hygiene for a read-only JSON API: bounded URL and header sizes, timeouts that cut off slow
// clients (slowloris), no request bodies on GET/HEAD, and response headers that keep browsers from
// sniffing, framing or leaking referrers. Connection-level rejections (before a request exists) are
// answered in the same error shape as everything else.
import fp from 'fastify-plugin';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../core/config.js';
import { ApiError, errorBody } from '../../core/errors.js';
import { sendError } from './error-handler.js';

/** Longest request target we read; no route needs more than ~2 KiB (50 broker symbols). */
export const MAX_URL_LENGTH = 8_192;
/** Request line plus headers; beyond it Node answers 431 before any handler runs. Node's own default. */
export const MAX_HEADER_BYTES = 16_384;

/** Fastify's server options for the timeouts (the rest is applied to the Node server by `hardenServer`). */
export function timeoutOptions(config: Config): { requestTimeout: number; keepAliveTimeout: number; connectionTimeout: number } {
  const { requestTimeoutMs, keepAliveTimeoutMs } = config.server;
  return {
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    // A socket silent in both directions for this long is dead: longer than any handler can wait on its
    // upstreams (several sequential upstream deadlines) and than the keep-alive window.
    connectionTimeout: Math.max(4 * config.upstreamTimeoutMs, keepAliveTimeoutMs, requestTimeoutMs) + 1_000,
  };
}

/**
 * Node checks header and request deadlines on a timer (30 s by default), so a dribbling client could
 * hold a socket that long past its deadline: check at least every second, and more often for short
 * deadlines. Set before listen, when the timer starts.
 */
export function hardenServer(server: Server, config: Config): void {
  const { headersTimeoutMs, requestTimeoutMs } = config.server;
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  // Constructor options in @types/node, but read from the instance when the server starts listening.
  const tunable = server as Server & { maxHeaderSize: number; connectionsCheckingInterval: number };
  tunable.maxHeaderSize = MAX_HEADER_BYTES;
  tunable.connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4)));
}

/** Headers for every response; the HTML pages (dashboard, API docs) set their own CSP. */
export function securityHeaders(config: Config): (url: string) => Record<string, string> {
  const common: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': config.corsOrigins === '*' ? 'cross-origin' : 'same-site',
  };
  if (config.tls) common['strict-transport-security'] = 'max-age=31536000';
  const api = { ...common, 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" };
  return (url) => (url.startsWith('/api/docs') ? common : api);
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The first hook of all, so that every answer carries these headers, refused preflights included. */
export const edgeHeaders = fp(
  async (app: FastifyInstance, options: { headers: (request: FastifyRequest) => Record<string, string> }) => {
    app.addHook('onRequest', async function edgeHeaders(request, reply) {
      reply.headers(options.headers(request));
    });
  },
  { name: 'mdp-edge-headers', fastify: '5.x' },
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

/** Fastify's `frameworkErrors`: a path it cannot decode never reaches the hooks, so it gets the edge headers here. */
export function frameworkErrorHandler(edgeHeaders: (request: FastifyRequest) => Record<string, string>) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.headers(edgeHeaders(request));
    const message = error.code === 'FST_ERR_BAD_URL' ? 'the request path is not valid percent-encoding' : 'malformed request';
    sendError(request, reply, new ApiError('INVALID_PARAMETER', message));
  };
}

/**
 * Fastify's `clientErrorHandler`: the socket failed before a request existed (headers too large, a
 * timeout, bytes that are not HTTP). Answer in the one error shape, with the HTTP status that says
 * what happened, and close.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('HEADERS_TOO_LARGE', `the request line and headers are larger than ${MAX_HEADER_BYTES} bytes`)
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('REQUEST_TIMEOUT', 'the request was not received in time')
        : new ApiError('INVALID_PARAMETER', 'malformed HTTP request');
  const { status } = apiError;
  // There is no request to take an id from: a fresh one still ties the answer to this log line.
  const id = randomUUID();
  this.log.debug({ reqId: id, code: error.code, status }, 'client error');
  if (!socket.writable || socket.bytesWritten > 0) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify(errorBody(apiError, id));
  // As Node itself does: a small write goes out at once, then the socket is gone whatever the client does.
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      `X-Request-Id: ${id}\r\n` +
      'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
      text,
  );
  socket.destroy();
}
