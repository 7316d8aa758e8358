// Builds the service; never listens (server.ts does). Tests build it with their own config and deps.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './core/config.js';
import { proxyTrust } from './core/networks.js';
import { type AppDeps, createDeps } from './deps.js';
import { createLogger, RequestLog, RequestLogController } from './log/logger.js';
import { brokerAccess } from './plugins/app/broker-access.js';
import { callerIdentity } from './plugins/app/caller-identity.js';
import { mcpAccess } from './plugins/app/mcp-access.js';
import { closingAnswer } from './plugins/app/closing-answer.js';
import { errorHandling } from './plugins/app/error-handler.js';
import { HotPath, requestId } from './plugins/app/hot-path.js';
import { metricsPlugin, ServiceMetrics } from './plugins/app/metrics.js';
import { edgeHeaders, securityHeaders } from './plugins/app/edge-headers.js';
import { hostRequired, preflightCheck, requestHygiene } from './plugins/app/request-hygiene.js';
import { clientErrorHandler, frameworkErrorHandler, hardenServer, timeoutOptions } from './plugins/app/server-limits.js';
import { strictIntegers } from './plugins/app/strict-integers.js';
import { CASE_INSENSITIVE, queryValues } from './plugins/app/query-values.js';
import { corsPlugin, marketAllowOrigin } from './plugins/external/cors.js';
import { openApi } from './plugins/external/openapi.js';
import { callerLimiter, rateLimiting } from './plugins/external/rate-limit.js';
import dashboardRoutes from './routes/dashboard.js';
import systemRoutes from './routes/system/index.js';
import providerARoutes from './routes/provider-a/index.js';
import providerBRoutes from './routes/provider-b/index.js';
import marketRoutes from './routes/market/index.js';
import brokerRoutes from './routes/broker/index.js';
import streamRoutes from './routes/stream.js';
import metricsRoute from './routes/metrics.js';
import mcpRoutes from './routes/mcp/index.js';
import { ErrorResponse, FreshnessSchema } from './routes/schemas.js';

export interface BuildAppOptions {
  logger?: Logger;
  /** Prebuilt shared services (tests pass their own store or Redis prefix). */
  deps?: AppDeps;
}

export async function buildApp(config: Config, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const logger = options.logger ?? createLogger(config);
  const tls = config.tls && { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) };
  const deps = options.deps ?? (await createDeps(config, logger));
  // The hot path answers beside Fastify, so what it shares with the pipeline is built first and given to both.
  const requestLog = new RequestLog(logger);
  const metrics = new ServiceMetrics(deps);
  const limiter = callerLimiter(config.rateLimitPerMinute, deps.store.shared);
  // One trust function for Fastify's request.ip and the hot path's caller address.
  const trustProxy = config.trustProxy === false ? undefined : proxyTrust(config.trustProxy);
  const hotPath = new HotPath({
    trustProxy,
    allowOrigin: marketAllowOrigin(config.corsOrigins),
    log: requestLog,
    limiter,
    record: metrics.record,
    cacheCounters: deps.cache.counters,
    keyed: deps.clientKeys.configured,
  });
  const timeouts = timeoutOptions(config);
  // Fastify's own logger type: the instance is then the plain FastifyInstance the plugins and routes take.
  const loggerInstance: FastifyBaseLogger = logger;
  const security = securityHeaders(config);
  const edgeHeadersOf = (request: FastifyRequest) => ({ 'x-data-mode': config.mode, 'x-request-id': request.id, ...security(request.url) });
  const app = Fastify({
    // Fresh repeats are answered before Fastify's routing (see hot-path.ts); the rest goes to Fastify.
    serverFactory: (handler) => {
      const listener = hotPath.listener(handler);
      // A request without Host is refused in the service's error shape (request-hygiene.ts), not by Node.
      const server = tls
        ? createHttpsServer({ ...tls, requireHostHeader: false }, listener)
        : createHttpServer({ requireHostHeader: false }, listener);
      // Fastify applies these only to servers it creates itself.
      server.keepAliveTimeout = timeouts.keepAliveTimeout;
      server.requestTimeout = timeouts.requestTimeout;
      server.setTimeout(timeouts.connectionTimeout);
      return server;
    },
    loggerInstance,
    logController: new RequestLogController(requestLog),
    trustProxy: trustProxy ?? false,
    routerOptions: { maxParamLength: 200 },
    bodyLimit: 1024,
    // Requests that arrive while closing are answered in the service's error shape (closing-answer.ts).
    return503OnClosing: false,
    ...timeouts,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler(edgeHeadersOf),
    genReqId: (req) => requestId(req.headers['x-request-id']),
    // x-case-insensitive: an OpenAPI note on enums read in any case (plugins/app/query-values.ts); no rule for Ajv.
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false, keywords: [CASE_INSENSITIVE] } },
  });
  hardenServer(app.server, config, app.log);

  app.decorate('deps', deps);
  // The broker's keep-alive and its real-time quote stream run while the app does (deps.close stops them).
  if (deps.broker.configured) deps.broker.client.start();
  deps.brokerQuotes?.start();
  logger.info({ broker: config.broker.kind, mode: config.mode }, 'broker endpoints ready');
  app.decorate('hotPath', hotPath);
  // Filled by the route plugins: what each stream topic is read from.
  app.decorate('liveTopics', deps.liveTopics);
  app.addHook('onClose', async () => deps.close());
  app.addSchema(ErrorResponse);
  app.addSchema(FreshnessSchema);

  // Each plugin names the ones it must follow (fastify-plugin `dependencies`): registered out of order,
  // the app refuses to start and says which is missing. The onRequest hooks run in this order.
  await app.register(errorHandling);
  await app.register(strictIntegers);
  await app.register(queryValues);
  await app.register(edgeHeaders, { headers: edgeHeadersOf });
  await app.register(closingAnswer);
  await app.register(hostRequired);
  await app.register(preflightCheck);
  await app.register(callerIdentity, { keys: deps.clientKeys });
  await app.register(brokerAccess, { access: deps.brokerAccess, tickets: deps.streamTickets });
  await app.register(mcpAccess);
  await app.register(corsPlugin);
  await app.register(requestHygiene);
  await app.register(rateLimiting, { limiter });
  await app.register(metricsPlugin, { metrics });
  await app.register(openApi);

  await app.register(providerARoutes, { prefix: '/api/provider-a' });
  await app.register(providerBRoutes, { prefix: '/api/provider-b' });
  await app.register(marketRoutes, { prefix: '/api/market' });
  await app.register(brokerRoutes, { prefix: '/api/broker' });
  await app.register(systemRoutes, { prefix: '/api/system' });
  await app.register(streamRoutes);
  await app.register(metricsRoute);
  if (config.mcp.enabled) await app.register(mcpRoutes);
  await app.register(dashboardRoutes);
  return app;
}
