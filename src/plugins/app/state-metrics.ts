// Prometheus metrics read off state that already lives in counters elsewhere (cache outcomes, upstream
// calls and health, budgets, data sources), when Prometheus scrapes: the request path pays nothing for them.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ShareTally } from '../../budget/share-tally.js';
import type { AppDeps } from '../../deps.js';
import { areaOf } from '../../core/upstream-ids.js';
import { within } from '../../core/within.js';

/** Counters that live elsewhere are exported as the growth seen since the previous scrape. */
export function deltaCounter(last: Map<string, number>, key: string, now: number): number {
  const delta = Math.max(0, now - (last.get(key) ?? 0));
  last.set(key, Math.max(now, last.get(key) ?? 0));
  return delta;
}

/** The outcome label of each lookup counter of the cache. */
const LOOKUP_OUTCOMES = [
  ['hit', 'hit'],
  ['miss', 'miss'],
  ['stale', 'stale'],
  ['not_found', 'notFound'],
] as const;

function numericCounters(deps: AppDeps): Record<string, number> {
  return deps.cache.counters as unknown as Record<string, number>;
}

export function registerStateMetrics(registry: Registry, deps: AppDeps): void {
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
  // Fair shares: by caller label (a client key's name, `anonymous` or `service`), never by address.
  const byCaller = (name: string, help: string, pick: (tally: ShareTally) => ReadonlyMap<string, number>) =>
    new Counter({
      name,
      help,
      labelNames: ['upstream', 'caller'],
      registers,
      collect() {
        this.reset();
        for (const [upstream, guard] of deps.budgets.all()) {
          for (const [caller, count] of pick(guard.tally)) this.inc({ upstream: areaOf(upstream), caller }, count);
        }
      },
    });
  byCaller(
    'mdp_upstream_caller_calls_total',
    'Calls sent to each capped upstream, by the caller they were put to: a client key, anonymous callers (by address), or the service itself.',
    (tally) => tally.calls,
  );
  byCaller(
    'mdp_caller_share_refusals_total',
    'Calls refused because the caller had spent its fair share of the upstream budget (429 CALLER_SHARE_SPENT, or a stale answer), by caller.',
    (tally) => tally.refusals,
  );
  const seenCache = new Map<string, number>();
  new Counter({
    name: 'mdp_cache_lookups_total',
    help: 'Upstream cache lookups by outcome (hit, miss, stale; not_found: no call sent, the provider\'s "not found" for the key is remembered).',
    labelNames: ['outcome'],
    registers,
    collect() {
      const counters = numericCounters(deps);
      for (const [outcome, counter] of LOOKUP_OUTCOMES) this.inc({ outcome }, deltaCounter(seenCache, counter, counters[counter] ?? 0));
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
    help: 'Upstream calls that failed, by upstream.',
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
