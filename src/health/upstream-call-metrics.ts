// The duration of every upstream call, by upstream and outcome. Built by the composition root before the
// upstream health it observes (which is told of each call at construction), and registered with the other
// metrics when they are (plugins/app/metrics.ts). It lives beside the health it observes, so that the
// composition root builds it without importing from a layer above the ones it composes.
import { Histogram } from 'prom-client';
import { areaOf } from '../core/upstream-ids.js';
import type { UpstreamCallObserver } from './upstream-health.js';

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
