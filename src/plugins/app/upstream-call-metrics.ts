// The duration of every upstream call, by upstream and outcome. Built by the composition root before the
// upstream health it observes (which is told of each call at construction), and registered with the other
// metrics when they are (metrics.ts).
import { Histogram } from 'prom-client';
import { areaOf } from '../../core/upstream-ids.js';
import type { UpstreamCallObserver } from '../../health/upstream-health.js';

export class UpstreamCallMetrics {
  readonly histogram = new Histogram({
    name: 'mdp_upstream_call_duration_seconds',
    help: 'Duration of upstream calls by outcome.',
    labelNames: ['upstream', 'outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [],
  });

  observe: UpstreamCallObserver = (upstream, ms, error) => {
    const code = error === undefined ? 'ok' : String((error as { code?: unknown }).code ?? 'error');
    this.histogram.labels(areaOf(upstream), code).observe(ms / 1000);
  };
}
