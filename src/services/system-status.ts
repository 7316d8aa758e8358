// The service's status (/api/system/status and the status stream topic) and readiness, from state the
// service already holds (health records, budget ledgers, cache counters, store state). It never calls an
// upstream, so it answers in milliseconds when all are down.
import type { BudgetSnapshot } from '../budget/budget-guard.js';
import type { CacheWindow } from '../cache/cache-store.js';
import type { AppDeps } from '../deps.js';
import type { CircuitSnapshot } from '../health/circuit-breaker.js';
import type { UpstreamState } from '../health/upstream-health.js';
import type { McpUse } from '../plugins/app/mcp-metrics.js';
import type { BrokerStreamStatus, ReadyResponse, StoreStatus, SystemStatus, UpstreamStatus } from './system-status-schema.js';
import { AREAS, type AreaId, areaOf } from '../core/upstream-ids.js';
import { within } from '../core/within.js';

/** Cache outcomes of API responses (X-Cache) for one upstream, as the metrics count them. */
export interface OutcomeCounts {
  HIT: number;
  MISS: number;
  STALE: number;
}

/** The status stream topic is re-read this often; it reads local state only. */
export const STATUS_WINDOW: CacheWindow = { freshMs: 5_000, staleMs: 0 };

/** A status differs from the last one when more than its clock fields changed. */
export function statusFingerprint(value: unknown): string {
  const { checkedAt: _checkedAt, uptimeSeconds: _uptime, brokerStream, ...rest } = value as SystemStatus;
  // The newest tick's age changes with every look: not a change of the status.
  const stream = brokerStream == null ? null : { ...brokerStream, lastTickAgeMs: undefined };
  return JSON.stringify({ ...rest, stream });
}

/**
 * Who a status is for. `local`: a caller the broker rules admit, who sees everything. `public`: anyone else, who
 * sees how the public service does (its status, reasons, budgets and cache figures) and nothing of the private
 * side: not the outbound proxy, nor the Redis nodes' addresses, nor the broker, whose rows, stream and failures
 * are left out and judged for local callers alone.
 */
export type StatusView = 'local' | 'public';

/** Ready unless the store is lost without a local fallback: a lost Redis with one is a designed mode, not a reason to stop traffic. */
export async function readReadiness(deps: AppDeps): Promise<ReadyResponse> {
  const store = await readStoreStatus(deps);
  const storeOk = !store.redisConfigured || store.redisReachable !== false || store.fallback;
  return {
    status: storeOk ? 'ready' : 'not_ready',
    checks: { config: true, store: storeOk },
    reason: storeOk ? null : (store.message ?? 'Redis is unreachable and no local fallback is active'),
  };
}

export interface StatusSources {
  deps: AppDeps;
  startedAt: Date;
  /** Cache outcomes of API responses per upstream (from the metrics plugin), when it is registered. */
  outcomes?: ReadonlyMap<string, OutcomeCounts>;
  /** The MCP server's use (from the metrics plugin); undefined when MCP=off. */
  mcp?: McpUse;
}

const NEVER_CALLED: UpstreamState = { calls: 0, errors: 0, lastSuccessAt: null, lastError: null, unreadable: {}, lastUnreadable: null };

export async function buildSystemStatus(sources: StatusSources, view: StatusView): Promise<SystemStatus> {
  const { deps, startedAt } = sources;
  const now = new Date();
  const [budgets, store] = await Promise.all([readBudgets(deps), readStoreStatus(deps)]);
  const upstreams = listUpstreams(deps, budgets, sources.outcomes ?? new Map(), view);
  const brokerStream = view === 'local' ? brokerStreamOf(deps) : null;
  const { status, reasons } = judge(upstreams, store, brokerStream);
  const common = {
    status,
    reason: reasons.length === 0 ? 'all configured upstreams answer' : reasons.join('; '),
    reasons,
    version: '1.0.0',
    mode: deps.config.mode,
    startedAt: startedAt.toISOString(),
    uptimeSeconds: Math.floor((now.getTime() - startedAt.getTime()) / 1000),
    checkedAt: now.toISOString(),
    cache: cacheFigures(deps),
    upstreams,
    dataSources: { quote: { ...deps.sources.answers.quote }, technical: { ...deps.sources.answers.technical } },
    mcp: sources.mcp ?? null,
  } as const;
  if (view === 'local') return { ...common, store, outboundProxy: outboundProxyOf(deps), brokerStream };
  // The Redis nodes' addresses, and the messages that may name them.
  const { primary: _primary, namedPrimary: _named, lastRescue: _rescue, message: _message, ...publicStore } = store;
  return { ...common, store: publicStore };
}

function listUpstreams(
  deps: AppDeps,
  budgets: Map<string, BudgetSnapshot>,
  outcomes: ReadonlyMap<string, OutcomeCounts>,
  view: StatusView,
): UpstreamStatus[] {
  const health = new Map<string, UpstreamState>();
  for (const [name, state] of Object.entries(deps.health.all())) {
    const id = areaOf(name);
    health.set(id, merged(health.get(id), state));
  }
  const circuits = circuitsById(deps);
  const known = AREAS.map((a) => ({ id: a.id, label: labelOf(a.id, a.label, deps), configured: a.configured(deps.config) }));
  const knownIds = new Set<string>(known.map((u) => u.id));
  // Records under names no area claims still appear, so a new source never goes unseen.
  const extra = [...new Set([...health.keys(), ...budgets.keys()])]
    .filter((id) => !knownIds.has(id))
    .map((id) => ({ id, label: id, configured: true }));
  const shown = [...known, ...extra].filter(({ id }) => view === 'local' || id !== 'broker');
  return shown.map(({ id, label, configured }) => {
    const state = health.get(id) ?? NEVER_CALLED;
    const { lastError } = state;
    const row: UpstreamStatus = {
      id,
      label,
      configured,
      state: stateOf(configured, state),
      calls: state.calls,
      errors: state.errors,
      lastSuccessAt: state.lastSuccessAt,
      lastError:
        lastError === null
          ? null
          : {
              at: lastError.at,
              code: lastError.code,
              message: (view === 'local' ? lastError.message : lastError.publicMessage).slice(0, 200),
            },
      unreadableAnswers: unreadableOf(state),
      budget: budgetOf(budgets.get(id)),
      cache: outcomesOf(outcomes.get(id)),
      circuit: circuits.get(id) ?? null,
    };
    return view === 'local' ? { ...row, proxy: proxyOf(id, deps) } : row;
  });
}

/** The proxies set, by host and port (never their credentials), or null when every call goes directly. */
function outboundProxyOf(deps: AppDeps): SystemStatus['outboundProxy'] {
  const { https, http, noProxy } = deps.config.proxy;
  if (https === undefined && http === undefined) return null;
  return { https: https?.address ?? null, http: http?.address ?? null, noProxy };
}

/** The proxy an area's upstream is reached through (its REST address; a broker's feed follows the same rule). */
function proxyOf(id: string, deps: AppDeps): string | null {
  const { config } = deps;
  const urls: Partial<Record<AreaId, string>> = {
    'provider-a': config.alphaVantage.url,
    'provider-b': config.massive.url,
    overview: config.overview.url,
    broker:
      config.broker.kind === 'ibkr'
        ? config.broker.ibkr.url
        : config.broker.kind === 'tastytrade'
          ? config.broker.tastytrade.url
          : undefined,
  };
  const url = urls[id as AreaId];
  return url === undefined ? null : (deps.outbound.proxyFor(url)?.address ?? null);
}

/** An area's records (an adapter's and its aggregate's, or a source serving two areas) read as one. */
function merged(a: UpstreamState | undefined, b: UpstreamState): UpstreamState {
  if (a === undefined) return b;
  const later = <T extends { at: string } | null>(x: T, y: T): T => (x === null || (y !== null && y.at > x.at) ? y : x);
  const unreadable = { ...a.unreadable };
  for (const [reason, n] of Object.entries(b.unreadable)) unreadable[reason] = (unreadable[reason] ?? 0) + n;
  return {
    calls: a.calls + b.calls,
    errors: a.errors + b.errors,
    lastSuccessAt:
      a.lastSuccessAt === null || (b.lastSuccessAt !== null && b.lastSuccessAt > a.lastSuccessAt) ? b.lastSuccessAt : a.lastSuccessAt,
    lastError: later(a.lastError, b.lastError),
    unreadable,
    lastUnreadable: later(a.lastUnreadable, b.lastUnreadable),
  };
}

const CIRCUIT_RANK = { closed: 0, half_open: 1, open: 2 } as const;

/** Several records may share one id (an adapter and its aggregate): the least healthy circuit speaks. */
export function circuitsById(deps: AppDeps): Map<string, CircuitSnapshot> {
  const out = new Map<string, CircuitSnapshot>();
  for (const [name, circuit] of Object.entries(deps.health.circuits())) {
    const id = areaOf(name);
    const seen = out.get(id);
    if (seen === undefined || CIRCUIT_RANK[circuit.state] > CIRCUIT_RANK[seen.state]) out.set(id, circuit);
  }
  return out;
}

function labelOf(id: string, label: string, deps: AppDeps): string {
  return id === 'broker' ? `${label} (${deps.config.broker.kind})` : label;
}

function stateOf(configured: boolean, state: UpstreamState): UpstreamStatus['state'] {
  if (!configured) return 'not_configured';
  if (state.lastError !== null && (state.lastSuccessAt === null || state.lastError.at > state.lastSuccessAt)) return 'failing';
  return state.calls === 0 ? 'idle' : 'ok';
}

function unreadableOf(state: UpstreamState): UpstreamStatus['unreadableAnswers'] {
  const byReason = { ...state.unreadable };
  const total = Object.values(byReason).reduce((sum, n) => sum + n, 0);
  const last = state.lastUnreadable;
  return { total, byReason, last: last === null ? null : { ...last, message: last.message.slice(0, 200) } };
}

function budgetOf(snapshot: BudgetSnapshot | undefined): UpstreamStatus['budget'] {
  if (snapshot === undefined) return null;
  return {
    limitMinute: snapshot.limits.perMinute > 0 ? snapshot.limits.perMinute : null,
    limitDay: snapshot.limits.perDay > 0 ? snapshot.limits.perDay : null,
    usedMinute: snapshot.usedMinute,
    usedDay: snapshot.usedDay,
    leftMinute: snapshot.leftMinute,
    leftDay: snapshot.leftDay,
    nextAvailableAt: snapshot.nextAvailableAt,
    backedOffUntil: snapshot.backedOffUntil,
    store: snapshot.store,
    share: snapshot.share ?? null,
  };
}

function outcomesOf(counts: OutcomeCounts | undefined): UpstreamStatus['cache'] {
  const { HIT = 0, MISS = 0, STALE = 0 } = counts ?? {};
  const total = HIT + MISS + STALE;
  return { hits: HIT, misses: MISS, stale: STALE, hitRatio: total === 0 ? null : round((HIT + STALE) / total) };
}

function round(ratio: number): number {
  return Math.round(ratio * 10_000) / 10_000;
}

async function readBudgets(deps: AppDeps): Promise<Map<string, BudgetSnapshot>> {
  const entries = await Promise.all(
    [...deps.budgets.all()].map(async ([name, guard]) => [areaOf(name), await within(guard.snapshot(), undefined)] as const),
  );
  const out = new Map<string, BudgetSnapshot>();
  for (const [id, snapshot] of entries) if (snapshot !== undefined && !out.has(id)) out.set(id, snapshot);
  return out;
}

function cacheFigures(deps: AppDeps): SystemStatus['cache'] {
  const counters = deps.cache.counters;
  const store = deps.cache.store as { size?: unknown; calculatedSize?: unknown };
  const total = counters.hit + counters.miss + counters.stale;
  return {
    entries: typeof store.size === 'number' ? store.size : null,
    bytes: typeof store.calculatedSize === 'number' ? store.calculatedSize : null,
    lookups: { hit: counters.hit, miss: counters.miss, stale: counters.stale, notFound: counters.notFound },
    hitRatio: total === 0 ? null : round((counters.hit + counters.stale) / total),
  };
}

/** What a store may report about itself; read loosely so the store layer can evolve without breaking status. */
interface ReportedStoreStatus {
  kind?: unknown;
  reachable?: unknown;
  redisReachable?: unknown;
  connected?: unknown;
  fallback?: unknown;
  fallenBack?: unknown;
  primary?: unknown;
  failovers?: unknown;
  settling?: unknown;
  namedPrimary?: unknown;
  rescues?: unknown;
  lastRescue?: { at?: unknown; reason?: unknown } | null;
  message?: unknown;
  redis?: { reachable?: unknown; connected?: unknown; fallback?: unknown };
}

interface StatusReporter {
  status(): unknown;
}

/** @internal */
export async function readStoreStatus(deps: AppDeps): Promise<StoreStatus> {
  const redisConfigured = deps.config.redis.target !== undefined;
  const reporter = (deps as { store?: Partial<StatusReporter> }).store;
  const fallbackKind = deps.config.redis.target?.kind ?? 'memory';
  if (reporter === undefined || typeof reporter.status !== 'function') {
    return { kind: fallbackKind, redisConfigured, redisReachable: null, fallback: false, ...NO_PRIMARY, message: null };
  }
  const read = within(
    Promise.resolve().then(() => reporter.status?.() as ReportedStoreStatus),
    'timeout' as const,
  );
  const reported = await read;
  if (reported === 'timeout' || reported === null || typeof reported !== 'object') {
    return {
      kind: fallbackKind,
      redisConfigured,
      redisReachable: redisConfigured ? false : null,
      fallback: redisConfigured,
      ...NO_PRIMARY,
      message: 'the store did not report its state in time',
    };
  }
  const kind = STORE_KINDS.find((k) => k === reported.kind) ?? fallbackKind;
  const reachable = firstBoolean(
    reported.redisReachable,
    reported.redis?.reachable,
    reported.redis?.connected,
    kind === 'redis' ? firstBoolean(reported.reachable, reported.connected) : null,
  );
  const fallback =
    firstBoolean(reported.fallback, reported.fallenBack, reported.redis?.fallback) ?? (redisConfigured && reachable === false);
  return {
    kind,
    redisConfigured,
    redisReachable: redisConfigured ? reachable : null,
    fallback,
    primary: typeof reported.primary === 'string' ? reported.primary : null,
    failovers: typeof reported.failovers === 'number' ? reported.failovers : null,
    settling: reported.settling === true,
    namedPrimary: typeof reported.namedPrimary === 'string' ? reported.namedPrimary : null,
    rescues: typeof reported.rescues === 'number' ? reported.rescues : null,
    lastRescue: lastRescueOf(reported.lastRescue),
    message: typeof reported.message === 'string' ? reported.message.slice(0, 200) : null,
  };
}

function lastRescueOf(reported: ReportedStoreStatus['lastRescue']): StoreStatus['lastRescue'] {
  const { at, reason } = reported ?? {};
  return typeof at === 'string' && typeof reason === 'string' ? { at, reason: reason.slice(0, 200) } : null;
}

const STORE_KINDS = ['embedded', 'redis', 'redis-cluster', 'redis-sentinel', 'memory'] as const;
const NO_PRIMARY = { primary: null, failovers: null, settling: false, namedPrimary: null, rescues: null, lastRescue: null } as const;

function firstBoolean(...values: unknown[]): boolean | null {
  for (const value of values) if (typeof value === 'boolean') return value;
  return null;
}

function brokerStreamOf(deps: AppDeps): BrokerStreamStatus {
  if (deps.brokerQuotes === undefined) return null;
  const { broker, role, state, available, subscriptions, lastTickAgeMs, reconnects, lastError } = deps.brokerQuotes.status();
  return {
    broker,
    role,
    state,
    available,
    subscriptions,
    lastTickAgeMs: lastTickAgeMs === null ? null : Math.max(0, Math.round(lastTickAgeMs)),
    reconnects,
    lastError: lastError === null ? null : lastError.slice(0, 200),
  };
}

function judge(
  upstreams: UpstreamStatus[],
  store: StoreStatus,
  brokerStream: BrokerStreamStatus,
): { status: SystemStatus['status']; reasons: string[] } {
  const reasons: string[] = [];
  const configured = upstreams.filter((u) => u.configured);
  const failing = configured.filter((u) => u.state === 'failing');
  for (const u of failing) reasons.push(`${u.label}: last call failed (${u.lastError?.code ?? 'error'})`);
  for (const u of configured) {
    const last = u.unreadableAnswers.last;
    // Still the latest word from the upstream: nothing has read well since.
    if (last !== null && (u.lastSuccessAt === null || last.at >= u.lastSuccessAt)) {
      reasons.push(
        `${u.label}: answers no longer read as expected (${last.reason}, ${u.unreadableAnswers.total} so far): the provider may have changed its format`,
      );
    }
  }
  for (const u of configured)
    if (u.circuit?.state === 'open')
      reasons.push(`${u.label}: circuit open after repeated failures; next probe at ${u.circuit.nextProbeAt}`);
  for (const u of configured) {
    const b = u.budget;
    if (b === null) continue;
    if (b.backedOffUntil !== null) reasons.push(`${u.label}: upstream refused for its limits; backing off until ${b.backedOffUntil}`);
    else if (b.leftMinute === 0 || b.leftDay === 0)
      reasons.push(`${u.label}: call budget spent${b.nextAvailableAt ? ` until ${b.nextAvailableAt}` : ''}; cached values are served`);
  }
  if (store.fallback) reasons.push('store: Redis is unreachable; using local state');
  if (brokerStream !== null && !brokerStream.available && brokerStream.lastError !== null)
    reasons.push(`broker stream ${brokerStream.state}: ${brokerStream.lastError}; broker quotes come from snapshots meanwhile`);
  if (configured.length === 0) return { status: 'down', reasons: ['no upstream is configured', ...reasons] };
  const called = configured.filter((u) => u.state !== 'idle');
  if (called.length > 0 && failing.length === called.length && called.length === configured.length) {
    return { status: 'down', reasons: ['no configured upstream is answering', ...reasons] };
  }
  return { status: reasons.length === 0 ? 'ok' : 'degraded', reasons };
}
