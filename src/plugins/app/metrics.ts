// Prometheus metrics: the service's own named mdp_* with their unit in the name; who may read them is in
// metrics-access.ts. The request path pays for one map lookup and a few array increments (a series per
// (method, route, status), see fast-histogram.ts); request counts are read off those series
// when Prometheus scrapes, as is everything that already lives in a counter elsewhere (cache outcomes,
// upstream calls, budgets).
import fp from 'fastify-plugin';
import type {} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { AppDeps } from '../../deps.js';
import { areaOf, areaOfRoute } from '../../core/upstream-ids.js';
import { within } from '../../core/within.js';
import { FastHistogram, type HistogramSeries } from './fast-histogram.js';
import { authorised, MetricsListener, notFound } from './metrics-access.js';

export type CacheOutcome = 'HIT' | 'MISS' | 'STALE';
export interface OutcomeCounts {
  HIT: number;
  MISS: number;
  STALE: number;
}

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

/** Counters that live elsewhere are exported as the growth seen since the previous scrape. */
function deltaCounter(last: Map<string, number>, key: string, now: number): number {
  const delta = Math.max(0, now - (last.get(key) ?? 0));
  last.set(key, Math.max(now, last.get(key) ?? 0));
  return delta;
}

function numericCounters(deps: AppDeps): Record<string, number> {
  return deps.cache.counters as unknown as Record<string, number>;
}

function registerStateMetrics(registry: Registry, deps: AppDeps): void {
  const registers = [registry];
  new Counter({
    name: 'mdp_data_source_answers_total',
    help: 'Quote and technical answers by the source that produced them (X-Data-Source: alpha-vantage or yahoo).',
    labelNames: ['endpoint', 'source'],
    registers,
    collect() {
      this.reset();
      for (const [endpoint, bySource] of Object.entries(deps.sources.answers)) {
        for (const [source, count] of Object.entries(bySource)) this.inc({ endpoint, source }, count);
      }
    },
  });
  const seenCache = new Map<string, number>();
  new Counter({
    name: 'mdp_cache_lookups_total',
    help: 'Upstream cache lookups by outcome (hit, miss, stale).',
    labelNames: ['outcome'],
    registers,
    collect() {
      const counters = numericCounters(deps);
      for (const outcome of ['hit', 'miss', 'stale']) this.inc({ outcome }, deltaCounter(seenCache, outcome, counters[outcome] ?? 0));
    },
  });
  new Counter({
    name: 'mdp_cache_single_flight_waits_total',
    help: 'Callers that waited on an upstream call already in flight for the same key instead of sending their own (scope: this process, or another replica via Redis).',
    labelNames: ['scope'],
    registers,
    collect() {
      const counters = numericCounters(deps);
      this.inc({ scope: 'process' }, deltaCounter(seenCache, 'singleFlightWaits', counters.singleFlightWaits ?? 0));
      this.inc({ scope: 'replicas' }, deltaCounter(seenCache, 'crossReplicaWaits', counters.crossReplicaWaits ?? 0));
    },
  });
  new Counter({
    name: 'mdp_cache_background_refreshes_total',
    help: 'Stale-while-revalidate refreshes started, and those that failed (the stale value kept being served).',
    labelNames: ['result'],
    registers,
    collect() {
      const counters = numericCounters(deps);
      this.inc({ result: 'started' }, deltaCounter(seenCache, 'refreshes', counters.refreshes ?? 0));
      this.inc({ result: 'failed' }, deltaCounter(seenCache, 'refreshFailures', counters.refreshFailures ?? 0));
    },
  });
  new Gauge({
    name: 'mdp_cache_entries',
    help: 'Entries held by the in-process cache.',
    registers,
    collect() {
      this.set(deps.cache.store.size);
    },
  });
  new Gauge({
    name: 'mdp_cache_size_bytes',
    help: 'Bytes held by the in-process cache (bounded by CACHE_MAX_BYTES).',
    registers,
    collect() {
      this.set(deps.cache.store.calculatedSize);
    },
  });

  const seenUpstream = new Map<string, number>();
  new Counter({
    name: 'mdp_upstream_calls_total',
    help: 'Calls sent to each upstream (successful or not).',
    labelNames: ['upstream'],
    registers,
    collect() {
      for (const [name, state] of Object.entries(deps.health.all())) {
        this.inc({ upstream: areaOf(name) }, deltaCounter(seenUpstream, `calls:${name}`, state.calls));
      }
    },
  });
  new Counter({
    name: 'mdp_upstream_errors_total',
    help: 'Upstream calls that failed, by upstream and the code of the last error.',
    labelNames: ['upstream'],
    registers,
    collect() {
      for (const [name, state] of Object.entries(deps.health.all())) {
        this.inc({ upstream: areaOf(name) }, deltaCounter(seenUpstream, `errors:${name}`, state.errors));
      }
    },
  });
  new Counter({
    name: 'mdp_upstream_unreadable_answers_total',
    help: 'Upstream answers that did not read as the wire format says (the provider may have changed it), by upstream and reason.',
    labelNames: ['upstream', 'reason'],
    registers,
    collect() {
      for (const [name, state] of Object.entries(deps.health.all())) {
        for (const [reason, count] of Object.entries(state.unreadable)) {
          this.inc({ upstream: areaOf(name), reason }, deltaCounter(seenUpstream, `unreadable:${name}:${reason}`, count));
        }
      }
    },
  });
  new Gauge({
    name: 'mdp_upstream_last_success_timestamp_seconds',
    help: 'When each upstream last answered successfully (Unix time).',
    labelNames: ['upstream'],
    registers,
    collect() {
      for (const [name, state] of Object.entries(deps.health.all())) {
        if (state.lastSuccessAt !== null) this.set({ upstream: areaOf(name) }, Date.parse(state.lastSuccessAt) / 1000);
      }
    },
  });
  const budgetGauge = (
    name: string,
    help: string,
    pick: (
      s: { usedMinute: number; usedDay: number; leftMinute: number | null; leftDay: number | null },
      window: 'minute' | 'day',
    ) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['upstream', 'window'],
      registers,
      async collect() {
        this.reset();
        for (const [upstream, guard] of deps.budgets.all()) {
          const snapshot = await within(guard.snapshot(), null);
          if (snapshot === null) continue;
          for (const window of ['minute', 'day'] as const) {
            const value = pick(snapshot, window);
            if (value !== null) this.set({ upstream: areaOf(upstream), window }, value);
          }
        }
      },
    });
  budgetGauge('mdp_upstream_budget_left_calls', 'Upstream calls left in the current minute and day (only for capped upstreams).', (s, w) =>
    w === 'minute' ? s.leftMinute : s.leftDay,
  );
  budgetGauge('mdp_upstream_budget_used_calls', 'Upstream calls spent in the current minute and day.', (s, w) =>
    w === 'minute' ? s.usedMinute : s.usedDay,
  );
}

/**
 * Adds the request hook and the metrics listener (see metrics-access.ts), and /metrics on the public port
 * when METRICS_TOKEN is set. The metrics are built with the app (app.ts), which hands the hot path the same
 * recorder for the answers it gives by itself.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance, { metrics }: { metrics: ServiceMetrics }) => {
    const { token } = app.deps.config.metrics;
    const text = async () => ({ text: await metrics.registry.metrics(), contentType: metrics.registry.contentType });
    const listener = new MetricsListener(app.deps.config.metrics, text);
    app.decorate('metrics', metrics);
    app.decorate('metricsListener', listener);
    app.addHook('onClose', () => listener.close());
    app.addHook('onResponse', function recordMetrics(request, reply, done) {
      metrics.observe(request, reply);
      done();
    });
    if (token === undefined) return;
    // No CORS: a browser page has no business reading internals, even with the token.
    app.get('/metrics', { schema: { hide: true }, config: { rateLimit: false, cors: false } }, async (request, reply) => {
      if (!authorised(token, request.headers.authorization)) throw notFound('/metrics');
      const { text: body, contentType } = await text();
      return reply.header('cache-control', 'no-store').type(contentType).send(body);
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
