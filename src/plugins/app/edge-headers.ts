// Response headers on every answer, refused ones included, that keep browsers from sniffing, framing or
// leaking referrers, and say the data mode and request id.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../core/config.js';

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

/** The first hook of all, so that every answer carries these headers, refused preflights included. */
export const edgeHeaders = fp(
  async (app: FastifyInstance, options: { headers: (request: FastifyRequest) => Record<string, string> }) => {
    app.addHook('onRequest', async function edgeHeaders(request, reply) {
      reply.headers(options.headers(request));
    });
  },
  { name: 'mdp-edge-headers', fastify: '5.x' },
);
