// Prometheus metrics of the requests answered: the service's own named mdp_* with their unit in the name;
// who may read them is in metrics-access.ts, the state that lives in counters elsewhere in state-metrics.ts.
// The request path pays for one map lookup and a few array increments (a series per (method, route,
// status), see fast-histogram.ts); request counts are read off those series when Prometheus scrapes.
import fp from 'fastify-plugin';
import type {} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { AppDeps } from '../../deps.js';
import type { OutcomeCounts } from '../../services/system-status.js';
import { areaOfRoute } from '../../core/upstream-ids.js';
import { FastHistogram, type HistogramSeries } from './fast-histogram.js';
import { MetricsListener } from './metrics-access.js';
import { McpMetrics } from './mcp-metrics.js';
import { registerOperationsMetrics } from './operations-metrics.js';
import { registerStateMetrics } from './state-metrics.js';

type CacheOutcome = keyof OutcomeCounts;

interface RouteChildren {
  duration: HistogramSeries;
  /** Which catalogue upstream serves this route, for per-upstream cache outcomes. */
  upstream: string | null;
}

const UNMATCHED = '(unmatched)';

export class ServiceMetrics {
  readonly registry = new Registry();
  /** Cache outcomes of API responses (X-Cache), per catalogue upstream; read by /api/system/status. */
  readonly outcomesByUpstream = new Map<string, OutcomeCounts>();
  /** MCP tool calls by tool and outcome, and their durations; recorded by the /mcp route. */
  readonly mcp: McpMetrics;
  /**
   * By route, then method, then status. Nested rather than one `${method} ${status} ${route}` key: route
   * and method are the same string objects on every request, so each lookup reuses their cached hash,
   * where a key built per request had to be flattened and hashed each time.
   */
  private readonly children = new Map<string, Map<string, Map<number, RouteChildren>>>();
  private readonly allChildren: RouteChildren[] = [];
  private readonly duration: FastHistogram;

  constructor(deps: AppDeps) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const children = this.allChildren;
    new Counter({
      name: 'mdp_http_requests_total',
      help: 'HTTP requests answered, by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
      collect() {
        this.reset();
        for (const { duration } of children) this.inc(duration.labels, duration.count);
      },
    });
    this.duration = new FastHistogram(
      'mdp_http_request_duration_seconds',
      'Time to answer an HTTP request, by route and status.',
      ['method', 'route', 'status'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      this.registry,
    );
    const outcomes = this.outcomesByUpstream;
    new Counter({
      name: 'mdp_http_cache_responses_total',
      help: 'API responses by the X-Cache outcome they carried, per upstream.',
      labelNames: ['upstream', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const [upstream, counts] of outcomes) {
          for (const outcome of ['HIT', 'MISS', 'STALE'] as const)
            if (counts[outcome] > 0) this.inc({ upstream, outcome }, counts[outcome]);
        }
      },
    });
    this.registry.registerMetric(deps.upstreamCalls.histogram);
    registerStateMetrics(this.registry, deps);
    registerOperationsMetrics(this.registry, deps);
    this.mcp = new McpMetrics(this.registry);
  }

  /** The Prometheus text of every metric, and its content type. */
  async text(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  /** Called once per answered request; cheap on purpose (the cache-hit path is benchmarked). */
  observe(request: FastifyRequest, reply: FastifyReply): void {
    this.record(
      request.method,
      request.routeOptions.url ?? UNMATCHED,
      reply.statusCode,
      reply.elapsedTime / 1000,
      reply.getHeader('x-cache'),
    );
  }

  /** The same observation from primitives, for requests answered by the hot path. */
  record = (method: string, route: string, status: number, seconds: number, cache: unknown): void => {
    const children = this.childrenOf(method, route, status);
    this.duration.observe(children.duration, seconds);
    if (children.upstream !== null && (cache === 'HIT' || cache === 'MISS' || cache === 'STALE'))
      this.countOutcome(children.upstream, cache);
  };

  private childrenOf(method: string, route: string, status: number): RouteChildren {
    let byMethod = this.children.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.children.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let children = byStatus.get(status);
    if (children === undefined) {
      children = { duration: this.duration.createSeries({ method, route, status: String(status) }), upstream: areaOfRoute(route) };
      byStatus.set(status, children);
      this.allChildren.push(children);
    }
    return children;
  }

  private countOutcome(upstream: string, outcome: CacheOutcome): void {
    let counts = this.outcomesByUpstream.get(upstream);
    if (counts === undefined) {
      counts = { HIT: 0, MISS: 0, STALE: 0 };
      this.outcomesByUpstream.set(upstream, counts);
    }
    counts[outcome] += 1;
  }
}

/**
 * Adds the request hook and the metrics listener (see metrics-access.ts); /metrics on the public port is a
 * route (routes/metrics.ts). The metrics are built with the app (app.ts), which hands the hot path the same
 * recorder for the answers it gives by itself.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance, { metrics }: { metrics: ServiceMetrics }) => {
    const listener = new MetricsListener(app.deps.config.metrics, () => metrics.text());
    app.decorate('metrics', metrics);
    app.decorate('metricsListener', listener);
    app.addHook('onClose', () => listener.close());
    app.addHook('onResponse', function recordMetrics(request, reply, done) {
      metrics.observe(request, reply);
      done();
    });
  },
  { name: 'mdp-metrics', fastify: '5.x', decorators: { fastify: ['deps'] } },
);

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics;
    /** Call `listen()` once the app listens (server.ts, the test helper): it resolves to the scrape URL. */
    metricsListener: MetricsListener;
  }
}
