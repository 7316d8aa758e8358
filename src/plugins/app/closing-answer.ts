// While the server closes, requests still arrive on connections that are busy (pipelined behind a request in
// flight, or sent on a kept-alive connection during the drain). Fastify's own answer to them
// (`return503OnClosing`) has a body of its own; here they get the one error shape, with Retry-After and
// Connection: close so that the client retries on another replica.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../core/errors.js';

/**
 * The closing check, after the edge headers so that the answer carries them. The hot path stops answering
 * first thing when the close begins.
 */
export const closingAnswer = fp(
  async (app: FastifyInstance) => {
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
      app.hotPath.disable();
    });
    app.addHook('onRequest', async function closingAnswer() {
      if (closing) {
        throw new ApiError('SHUTTING_DOWN', 'this instance is shutting down: retry the request', {
          retryAfterSeconds: 1,
          headers: { connection: 'close' },
        });
      }
    });
  },
  { name: 'mdp-closing-answer', fastify: '5.x', dependencies: ['mdp-edge-headers'], decorators: { fastify: ['hotPath'] } },
);
