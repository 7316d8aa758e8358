// What every broker data route shares: it declares its data (the access hook then judges each caller, see
// plugins/app/broker-access.ts), grants CORS to the broker's listed pages only, answers its preflights with that
// policy, and renders its answers private.
import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import { brokerCors } from '../../plugins/external/cors.js';
import type { SendOptions } from '../../plugins/app/send-cached.js';

export function brokerDataConfig(app: FastifyInstance): FastifyContextConfig {
  return { brokerData: true, cors: brokerCors(app.deps.brokerAccess) };
}

/** How broker answers are sent: never to a shared cache, the micro-cache included. */
export const PRIVATE: SendOptions = { visibility: 'private' };

/**
 * The route's preflight, so that @fastify/cors answers it with the broker policy (rather than the market one
 * of its catch-all OPTIONS route). Its handler runs only when CORS did not answer: a preflight without a CORS grant.
 */
export function brokerPreflight(app: FastifyInstance, path: string): void {
  app.options(path, { config: brokerDataConfig(app), schema: { hide: true } }, (_request, reply) => reply.callNotFound());
}
