// Request hygiene for a read-only JSON API: bounded URL and header sizes, timeouts that cut off slow
// clients (slowloris), no request bodies on GET/HEAD, and response headers that keep browsers from
// sniffing, framing or leaking referrers. Connection-level rejections (before a request exists) are
// answered in the same error shape as everything else.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { ApiError, type ErrorBody } from '../errors.js';

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

export function registerRequestHygiene(app: FastifyInstance): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.url.length > MAX_URL_LENGTH) {
      throw new ApiError('INVALID_PARAMETER', `the request URL is longer than ${MAX_URL_LENGTH} characters`);
    }
    if ((request.method === 'GET' || request.method === 'HEAD') && hasBody(request)) {
      // The body is never read: close rather than drain whatever the client keeps sending.
      reply.header('connection', 'close');
      throw new ApiError('INVALID_PARAMETER', `${request.method} requests take no body: send parameters in the query string`);
    }
  });
}

/**
 * Fastify's `clientErrorHandler`: the socket failed before a request existed (headers too large, a
 * timeout, bytes that are not HTTP). Answer in the one error shape, with the HTTP status that says
 * what happened, and close.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, `the request line and headers are larger than ${MAX_HEADER_BYTES} bytes`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request was not received in time']
        : [400, 'malformed HTTP request'];
  this.log.debug({ code: error.code, status }, 'client error');
  if (!socket.writable || socket.bytesWritten > 0) {
    socket.destroy();
    return;
  }
  const body: ErrorBody = { error: { code: 'INVALID_PARAMETER', message, status, requestId: randomUUID() } };
  const text = JSON.stringify(body);
  // As Node itself does: a small write goes out at once, then the socket is gone whatever the client does.
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
      text,
  );
  socket.destroy();
}
