// The HTTP server's own limits: bounded URL and header sizes, timeouts that cut off slow clients
// (slowloris), and connection-level rejections (before a request exists, or a path Fastify cannot decode)
// answered in the same error shape as everything else, as are the requests Node would answer itself
// (a missing Host: request-hygiene.ts; an unknown expectation, CONNECT: `hardenServer`).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../core/config.js';
import { ApiError, errorBody } from '../../core/errors.js';
import { sendError } from './error-handler.js';

/** Longest request target we read; no route needs more than ~2 KiB (50 broker symbols). */
export const MAX_URL_LENGTH = 8_192;
/** Request line plus headers; beyond it Node answers 431 before any handler runs. Node's own default. */
const MAX_HEADER_BYTES = 16_384;

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
 *
 * Two requests Node answers by itself, outside the error shape, are taken from it: an `Expect` other than
 * `100-continue` (a bare 417) is answered like any request, as RFC 9110 §10.1.1 lets a server do; CONNECT
 * (the socket closed without a word) is a 405, since this service is no forward proxy.
 */
export function hardenServer(server: Server, config: Config, log: FastifyBaseLogger): void {
  const { headersTimeoutMs, requestTimeoutMs } = config.server;
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  // Constructor options in @types/node, but read from the instance when the server starts listening.
  const tunable = server as Server & { maxHeaderSize: number; connectionsCheckingInterval: number };
  tunable.maxHeaderSize = MAX_HEADER_BYTES;
  tunable.connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4)));
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    const refusal = new ApiError('METHOD_NOT_ALLOWED', 'CONNECT is not allowed: this service is not a proxy; use GET', {
      headers: { allow: 'GET, HEAD, OPTIONS' },
    });
    answerOnSocket(socket, refusal, log, req.method);
  });
}

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
  answerOnSocket(socket, apiError, this.log, error.code);
}

/** The one error body written straight to a socket that has no Fastify request, then the socket closed. */
function answerOnSocket(socket: Socket, apiError: ApiError, log: FastifyBaseLogger, code: string | undefined): void {
  const { status } = apiError;
  // There is no request to take an id from: a fresh one still ties the answer to this log line.
  const id = randomUUID();
  log.debug({ reqId: id, code, status }, 'client error');
  if (!socket.writable || socket.bytesWritten > 0) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify(errorBody(apiError, id));
  const headers = Object.entries(apiError.headers).map(([name, value]) => `${name}: ${value}\r\n`);
  // As Node itself does: a small write goes out at once, then the socket is gone whatever the client does.
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      `X-Request-Id: ${id}\r\n${headers.join('')}` +
      'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
      text,
  );
  socket.destroy();
}
