// While the server closes, requests still arrive on connections that are busy (pipelined behind a request in
// flight, or sent on a kept-alive connection during the drain). Fastify's own answer to them
// (`return503OnClosing`) has a body of its own; here they get the one error shape, with Retry-After and
// Connection: close so that the client retries on another replica.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

/**
 * Registers the closing check; call it right after the hook that sets the edge headers, so that the answer
 * carries them. `onClosing` runs first thing when the close begins (the hot path stops answering).
 */
export function registerClosingAnswer(app: FastifyInstance, onClosing: () => void): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    onClosing();
  });
  app.addHook('onRequest', async () => {
    if (closing) {
      throw new ApiError('SHUTTING_DOWN', 'this instance is shutting down: retry the request', {
        retryAfterSeconds: 1,
        headers: { connection: 'close' },
      });
    }
  });
}
