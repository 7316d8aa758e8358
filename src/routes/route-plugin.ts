// A route area as a plugin: encapsulated (its prefix and hooks stay its own), and declaring what must be
// registered before it: the hooks that act on each route as it is added (strict integers, the per-caller
// limit), the error handling, the metrics, and the OpenAPI document that lists every route.
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';

const ROUTE_DEPENDENCIES = ['mdp-error-handling', 'mdp-strict-integers', 'mdp-rate-limit', 'mdp-metrics', 'mdp-openapi'];

export function routePlugin(name: string, plugin: FastifyPluginAsync, options: { encapsulate?: boolean } = {}): FastifyPluginAsync {
  return fp(plugin, {
    name,
    fastify: '5.x',
    encapsulate: options.encapsulate ?? true,
    dependencies: ROUTE_DEPENDENCIES,
    decorators: { fastify: ['deps', 'liveTopics', 'hotPath'] },
  });
}
