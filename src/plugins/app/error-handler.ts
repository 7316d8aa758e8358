// Every failure leaves the service in one body shape with a stable code. Validation errors are turned
// into MISSING_PARAMETER / INVALID_PARAMETER with a message a caller can act on; anything unexpected is a
// 500 with no detail (the detail goes to the log).
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from '../../core/errors.js';
import { echoed } from '../../core/parameter-text.js';
import { isLocalCaller } from './broker-access.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** The first Ajv error as the message a caller can act on (the REST routes' and the MCP tools' arguments alike). */
export function validationToApiError(errors: AjvError[]): ApiError {
  const first = errors[0];
  if (first === undefined) return new ApiError('INVALID_PARAMETER', 'invalid request');
  // A parameter's name may be the caller's own (an unknown one): echoed, like every value.
  const field = echoed(first.instancePath.replace(/^\//, '').split('/')[0] || String(first.params.missingProperty ?? 'parameter'));
  switch (first.keyword) {
    case 'required':
      return new ApiError('MISSING_PARAMETER', `${echoed(String(first.params.missingProperty))} is required`);
    case 'minLength':
      return new ApiError('MISSING_PARAMETER', `${field} is required and must not be empty`);
    case 'enum':
    case 'anyOf':
      return new ApiError('INVALID_PARAMETER', `${field} must be one of: ${allowedValues(first).join(', ')}`);
    case 'maxLength':
      return new ApiError('INVALID_PARAMETER', `${field} must be at most ${String(first.params.limit)} characters`);
    case 'pattern':
      return new ApiError('INVALID_PARAMETER', `${field} has characters that are not allowed`);
    case 'type':
      return new ApiError('INVALID_PARAMETER', `${field} must be a single ${String(first.params.type)} value`);
    case 'minimum':
    case 'maximum':
      return new ApiError(
        'INVALID_PARAMETER',
        `${field} must be ${first.keyword === 'minimum' ? 'at least' : 'at most'} ${String(first.params.limit)}`,
      );
    case 'additionalProperties':
      return new ApiError('INVALID_PARAMETER', `unknown parameter: ${echoed(String(first.params.additionalProperty))}`);
    default:
      return new ApiError('INVALID_PARAMETER', `${field} is invalid`);
  }
}

function allowedValues(error: AjvError): string[] {
  const allowed = error.params.allowedValues;
  return Array.isArray(allowed) ? allowed.map(String) : [];
}

function toApiError(error: FastifyError | ApiError | Error): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (Array.isArray(fastifyError.validation)) return validationToApiError(fastifyError.validation as AjvError[]);
  const status = fastifyError.statusCode ?? 500;
  if (status === 429) return new ApiError('RATE_LIMITED', 'too many requests from this address', { retryAfterSeconds: 60 });
  if (status === 404) return new ApiError('NOT_FOUND', 'not found');
  if (status >= 400 && status < 500) return new ApiError('INVALID_PARAMETER', 'malformed request');
  return new ApiError('INTERNAL_ERROR', 'internal error');
}

/** Extra top-level keys beside `error` (only /query adds Alpha Vantage's own error key), given the message the caller hears. */
export type ErrorExtras = (error: ApiError, message: string) => Record<string, string>;

/** `message`: the words this caller hears; the public ones unless the caller is known to be local (handleError). */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: ApiError,
  extras?: ErrorExtras,
  message = error.publicMessage,
): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  reply.headers(error.headers);
  reply.header('cache-control', 'no-store');
  const body = errorBody(error, request.id, message);
  const text = JSON.stringify(extras === undefined ? body : { ...body, ...extras(error, message) });
  return reply.code(error.status).type('application/json; charset=utf-8').send(text);
}

/**
 * The service's error handler; routes that add keys to the body pass `extras` (a route-level errorHandler). An
 * error whose full words name the private side (the outbound proxy, the networks allowed) is told in full to
 * a local caller only; anyone else hears its public words, and the log line keeps the full ones.
 */
export function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply, extras?: ErrorExtras): FastifyReply {
  const apiError = toApiError(error);
  const local = apiError.publicMessage === apiError.message || isLocalCaller(request);
  if (apiError.status >= 500 && !(error instanceof ApiError)) request.log.error({ err: error }, 'unhandled error');
  else if (apiError.status >= 500) request.log.warn({ code: apiError.code, detail: apiError.message }, 'request failed');
  else if (!local) request.log.info({ code: apiError.code, detail: apiError.message }, 'request refused');
  return sendError(request, reply, apiError, extras, local ? apiError.message : apiError.publicMessage);
}

/** Every error in the one body; an unknown path is 404, a known path with another method 405. */
export const errorHandling = fp(
  async (app: FastifyInstance) => {
    const getRoutes = new Set<string>();
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.includes('GET')) getRoutes.add(route.url);
    });
    app.setErrorHandler((error: FastifyError, request, reply) => handleError(error, request, reply));

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? '/';
      if (getRoutes.has(path)) {
        return sendError(
          request,
          reply,
          new ApiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}; use GET`, {
            headers: { allow: 'GET, HEAD, OPTIONS' },
          }),
        );
      }
      return sendError(request, reply, new ApiError('NOT_FOUND', `no route for ${request.method} ${echoed(path)}`));
    });
  },
  { name: 'mdp-error-handling', fastify: '5.x' },
);
