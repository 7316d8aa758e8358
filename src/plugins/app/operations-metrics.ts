// Prometheus series for the states an operator is alerted on (deploy/prometheus/alerts.yml): each upstream's
// circuit and budget limits, the store's mode and since when, the broker's session and quote feed, whether the
// US market is open, and the streams held against their cap. Read when Prometheus scrapes, from state that
// lives elsewhere; labels are bounded (an area, a state, a broker kind: never an address or a symbol). A state
// is one series per possible value, 1 for the current one, so a query picks a state by its label.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QuoteStreamState } from '../../broker/quote-stream.js';
import type { BrokerStatus } from '../../broker/broker.js';
import type { AppDeps } from '../../deps.js';
import type { CircuitState } from '../../health/circuit-breaker.js';
import type { StoreMode } from '../../store/state-store.js';
import { inRegularSession } from '../../core/us-market-time.js';
import { circuitsById } from '../../services/system-status.js';
import { areaOf } from '../../core/upstream-ids.js';
import { deltaCounter } from './state-metrics.js';

const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'half_open', 'open'];
const STORE_MODES: readonly StoreMode[] = ['embedded', 'shared', 'local_fallback', 'settling'];
const SESSION_STATES: readonly BrokerStatus[] = ['connected', 'unauthenticated', 'disconnected', 'not_configured'];
const FEED_STATES: readonly QuoteStreamState[] = ['off', 'connecting', 'connected', 'unauthenticated', 'disconnected'];

/**
 * The broker session is checked again when the last check is older than this: a session lost while nobody
 * asks is seen within a scrape or two, at the cost of one cheap broker call per replica this often at most.
 */
const SESSION_CHECK_MS = 30_000;
/** How long a scrape waits for that check; a later answer is the next scrape's. */
const SESSION_WAIT_MS = 250;

/** One series per state, 1 for the current one. */
function setState<T extends string>(
  gauge: Gauge,
  states: readonly T[],
  current: T,
  labels: Record<string, string> = {},
  name = 'state',
): void {
  for (const state of states) gauge.set({ ...labels, [name]: state }, state === current ? 1 : 0);
}

export function registerOperationsMetrics(registry: Registry, deps: AppDeps): void {
  const registers = [registry];
  new Gauge({
    name: 'mdp_upstream_circuit_state',
    help: "Each upstream's circuit breaker: 1 for its current state (closed; open: calls fail fast; half_open: a probe may go), 0 for the others.",
    labelNames: ['upstream', 'state'],
    registers,
    collect() {
      this.reset();
      for (const [upstream, circuit] of circuitsById(deps)) setState(this, CIRCUIT_STATES, circuit.state, { upstream });
    },
  });
  const seenOpenings = new Map<string, number>();
  new Counter({
    name: 'mdp_upstream_circuit_openings_total',
    help: "Times each upstream's circuit opened (a run of failures, or a failed probe).",
    labelNames: ['upstream'],
    registers,
    collect() {
      for (const [upstream, circuit] of circuitsById(deps)) this.inc({ upstream }, deltaCounter(seenOpenings, upstream, circuit.opened));
    },
  });
  new Gauge({
    name: 'mdp_upstream_budget_limit_calls',
    help: 'Upstream calls allowed per minute and per day (only for capped upstreams): the limit mdp_upstream_budget_used_calls counts against.',
    labelNames: ['upstream', 'window'],
    registers,
    collect() {
      this.reset();
      for (const [name, guard] of deps.budgets.all()) {
        const { perMinute, perDay } = guard.limits;
        if (perMinute > 0) this.set({ upstream: areaOf(name), window: 'minute' }, perMinute);
        if (perDay > 0) this.set({ upstream: areaOf(name), window: 'day' }, perDay);
      }
    },
  });

  new Gauge({
    name: 'mdp_store_mode',
    help: 'Where shared state is decided: 1 for the current mode (embedded: no Redis; shared: in Redis; local_fallback: Redis lost, local state; settling: after a failover, budgets local until every replica wrote back).',
    labelNames: ['mode'],
    registers,
    collect() {
      setState(this, STORE_MODES, deps.store.mode().mode, {}, 'mode');
    },
  });
  new Gauge({
    name: 'mdp_store_mode_since_timestamp_seconds',
    help: 'When the store entered its current mode (Unix time).',
    registers,
    collect() {
      this.set(deps.store.mode().since.getTime() / 1000);
    },
  });
  new Counter({
    name: 'mdp_store_failovers_total',
    help: 'Redis primaries replaced since start (a failover, or a node back empty); 0 without Redis.',
    registers,
    collect() {
      this.reset();
      this.inc(deps.store.redis?.failovers ?? 0);
    },
  });
  new Gauge({
    name: 'mdp_store_replicas',
    help: 'Live replicas of the service seen through the Redis heartbeat, this one included (1 without Redis).',
    registers,
    collect() {
      this.set(deps.store.heartbeat?.replicas ?? 1);
    },
  });

  new Gauge({
    name: 'mdp_market_open',
    help: "1 while the market is open, else 0; market us: the US regular session (weekdays 09:30 to 16:00 New York time; exchange holidays are not known). The broker's alerts hold only then.",
    labelNames: ['market'],
    registers,
    collect() {
      this.set({ market: 'us' }, inRegularSession(Date.now()) ? 1 : 0);
    },
  });
  const { brokerData, brokerQuotes } = deps;
  const broker = deps.config.broker.kind;
  new Gauge({
    name: 'mdp_broker_session_state',
    help: `The broker session as last checked (again when older than ${SESSION_CHECK_MS / 1000} s): 1 for its state (connected, unauthenticated: someone must log in, disconnected, not_configured), 0 for the others.`,
    labelNames: ['broker', 'state'],
    registers,
    async collect() {
      this.reset();
      if (broker === 'none') return;
      const health = await brokerData.recentHealth(SESSION_CHECK_MS, SESSION_WAIT_MS);
      if (health !== undefined) setState(this, SESSION_STATES, health.status, { broker });
    },
  });
  new Gauge({
    name: 'mdp_broker_stream_state',
    help: "The broker's real-time quote feed (one for the deployment; a replica without it reports its holder's): 1 for its state, 0 for the others.",
    labelNames: ['broker', 'state'],
    registers,
    collect() {
      if (brokerQuotes !== undefined) setState(this, FEED_STATES, brokerQuotes.status().state, { broker });
    },
  });
  new Gauge({
    name: 'mdp_broker_stream_symbols',
    help: "Symbols subscribed on the broker's quote feed: while any are, the feed should be connected.",
    labelNames: ['broker'],
    registers,
    collect() {
      if (brokerQuotes !== undefined) this.set({ broker }, brokerQuotes.status().subscriptions);
    },
  });
  new Gauge({
    name: 'mdp_broker_stream_last_tick_age_seconds',
    help: "Age of the newest tick on the broker's quote feed (absent before the first).",
    labelNames: ['broker'],
    registers,
    collect() {
      this.reset();
      const age = brokerQuotes?.status().lastTickAgeMs ?? null;
      if (age !== null) this.set({ broker }, Math.max(0, age) / 1000);
    },
  });
}

/**
 * The streams this server holds against STREAM_MAX_CONNECTIONS, and how long a pass over a topic's viewers takes;
 * registered by the stream route, which holds them. Returns what the hub reports each pass to.
 */
export function registerStreamMetrics(registry: Registry, connections: () => number, max: number): (ms: number) => void {
  new Gauge({
    name: 'mdp_stream_viewers',
    help: 'Open /api/stream connections on this server.',
    registers: [registry],
    collect() {
      this.set(connections());
    },
  });
  new Gauge({
    name: 'mdp_stream_max_viewers',
    help: 'The most /api/stream connections this server holds (STREAM_MAX_CONNECTIONS); beyond it 429 RATE_LIMITED.',
    registers: [registry],
    collect() {
      this.set(max);
    },
  });
  const passes = new Histogram({
    name: 'mdp_stream_fan_out_seconds',
    help: "Time to write a topic's newest event to each of its viewers on this server that lacks it (one pass). A viewer waits up to a pass: passes longer than the gap between a topic's events mean more viewers than this server can write to.",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return (ms) => passes.observe(ms / 1000);
}
