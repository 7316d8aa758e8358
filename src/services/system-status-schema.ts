// The shape of /api/system/status, /api/system/live and /api/system/ready: one source for serialisation
// and the OpenAPI document.
import { type Static, Type } from '@sinclair/typebox';

const Nullable = <
  T extends
    | ReturnType<typeof Type.String>
    | ReturnType<typeof Type.Integer>
    | ReturnType<typeof Type.Number>
    | ReturnType<typeof Type.Boolean>,
>(
  schema: T,
) => Type.Union([schema, Type.Null()]);

const IsoTime = Type.String({ format: 'date-time' });

/** Said of every field that describes the private side. */
const LOCAL_ONLY =
  'Present for local callers only: those the broker rules admit (BROKER_ALLOW_FROM as TRUST_PROXY judges it, or BROKER_TOKEN).';

const OverallStatus = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('down')], {
  description:
    'ok: everything configured works; degraded: something is failing, spent or fallen back but data is served; down: no configured upstream is answering.',
});

const LastError = Type.Union(
  [
    Type.Object(
      {
        at: IsoTime,
        code: Type.String({ description: 'The error code a caller saw (e.g. UPSTREAM_TIMEOUT).' }),
        message: Type.String({
          description:
            'Short and safe: never a key, token or upstream URL. A caller that is not local hears that the upstream could not be reached, never which outbound proxy failed.',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The most recent failed upstream call, or null.' },
);

const UnreadableAnswers = Type.Object(
  {
    total: Type.Integer(),
    byReason: Type.Record(Type.String(), Type.Integer(), {
      description: 'Counts by reason (e.g. quote-field, chart-meta, unrecognised-notice).',
    }),
    last: Type.Union([
      Type.Object(
        { at: IsoTime, reason: Type.String(), message: Type.String({ description: 'What did not read; never a key or upstream URL.' }) },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  {
    additionalProperties: false,
    description:
      "Answers that did not read as the provider's wire format says (a missing field, an unknown notice wording), since start: the first sign that a provider changed its format.",
  },
);

const ShareWindow = Type.Object(
  {
    limit: Type.Integer({ description: "The window's limit." }),
    reserved: Type.Integer({ description: 'Calls of the window kept for callers below their share.' }),
    callers: Type.Integer({ description: 'Callers (client keys or addresses) that spent in the window.' }),
    held: Type.Integer({
      description: 'Callers held to their share in the window: refused a new call (`CALLER_SHARE_SPENT`), served from the cache.',
    }),
  },
  { additionalProperties: false },
);

const Budget = Type.Union(
  [
    Type.Object(
      {
        limitMinute: Nullable(Type.Integer({ description: 'null: no per-minute cap' })),
        limitDay: Nullable(Type.Integer({ description: 'null: no daily cap' })),
        usedMinute: Type.Integer(),
        usedDay: Type.Integer({ description: 'Calls in the last 24 hours.' }),
        leftMinute: Nullable(Type.Integer()),
        leftDay: Nullable(Type.Integer()),
        nextAvailableAt: Nullable(
          Type.String({ format: 'date-time', description: 'When the next call may be sent; null when one may be sent now.' }),
        ),
        backedOffUntil: Nullable(
          Type.String({ format: 'date-time', description: 'The upstream refused for its own limits; nothing is sent before this time.' }),
        ),
        store: Type.String({ description: 'Where the ledger lives: memory, embedded, redis or local-fallback.' }),
        share: Type.Union(
          [
            Type.Object(
              {
                reserve: Type.Number({ description: 'BUDGET_RESERVE: the part of each window kept for callers below their share.' }),
                minute: Type.Optional(ShareWindow),
                day: Type.Optional(ShareWindow),
              },
              { additionalProperties: false },
            ),
            Type.Null(),
          ],
          {
            description:
              'Fair shares in force, per window that keeps calls back: one caller may spend `limit - reserved` of a window; the last `reserved` go only to callers that have spent less than their share. null: no window keeps calls back (BUDGET_RESERVE is 0, or the limits are too small).',
          },
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The call budget, or null when this upstream has none (or it could not be read in time).' },
);

const CacheOutcomes = Type.Object(
  {
    hits: Type.Integer(),
    misses: Type.Integer(),
    stale: Type.Integer(),
    hitRatio: Nullable(Type.Number({ minimum: 0, maximum: 1, description: '(hits + stale) / responses; null before the first response.' })),
  },
  { additionalProperties: false },
);

const Circuit = Type.Union(
  [
    Type.Object(
      {
        state: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')], {
          description:
            'open: the upstream kept failing, calls fail fast (stale data is served where cached) until the next probe; half_open: one probe may go out.',
        }),
        consecutiveFailures: Type.Integer(),
        opened: Type.Integer({ description: 'Times the circuit opened since start.' }),
        rejected: Type.Integer({ description: 'Calls not sent because the circuit was open.' }),
        nextProbeAt: Nullable(
          Type.String({ format: 'date-time', description: 'When the circuit lets a probe through; null unless open.' }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: "The upstream's circuit breaker, or null before its first call." },
);

export const UpstreamStatus = Type.Object(
  {
    id: Type.String({ description: 'provider-a, provider-b, overview, broker, or the name an adapter records.' }),
    label: Type.String(),
    configured: Type.Boolean(),
    state: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('idle'), Type.Literal('not_configured')], {
      description: 'failing: the last call failed; idle: no call yet.',
    }),
    calls: Type.Integer(),
    errors: Type.Integer(),
    lastSuccessAt: Nullable(IsoTime),
    lastError: LastError,
    unreadableAnswers: UnreadableAnswers,
    budget: Budget,
    cache: CacheOutcomes,
    circuit: Circuit,
    proxy: Type.Optional(
      Nullable(
        Type.String({
          description: `The outbound proxy this upstream is reached through, host:port; null when it is reached directly. ${LOCAL_ONLY}`,
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

const OutboundProxy = Type.Union(
  [
    Type.Object(
      {
        https: Nullable(
          Type.String({ description: 'The proxy of https:// and wss:// upstreams (HTTPS_PROXY, else HTTP_PROXY), host:port.' }),
        ),
        http: Nullable(Type.String({ description: 'The proxy of http:// and ws:// upstreams (HTTP_PROXY), host:port.' })),
        noProxy: Type.Array(Type.String(), { description: 'NO_PROXY: hosts, domains, addresses and ranges reached directly.' }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description: `The outbound proxy upstream calls and broker websockets go through (never its credentials), or null when none is set. Loopback and the IBKR gateway's host are reached directly unless PROXY_ALSO_FOR names them. ${LOCAL_ONLY}`,
  },
);

export const StoreStatus = Type.Object(
  {
    kind: Type.Union(
      [
        Type.Literal('embedded'),
        Type.Literal('redis'),
        Type.Literal('redis-cluster'),
        Type.Literal('redis-sentinel'),
        Type.Literal('memory'),
      ],
      { description: 'Where cache, budgets and last good values are kept: one Redis node, a Cluster, a primary found through Sentinel.' },
    ),
    redisConfigured: Type.Boolean(),
    redisReachable: Nullable(Type.Boolean()),
    fallback: Type.Boolean({ description: 'Redis is configured but lost: local state is used, by design.' }),
    primary: Type.Optional(
      Nullable(
        Type.String({ description: `The Redis primary in use, host:port (a Cluster: every primary, comma-separated). ${LOCAL_ONLY}` }),
      ),
    ),
    failovers: Nullable(Type.Integer({ description: 'Redis primaries replaced since start: a failover, or a node restarted empty.' })),
    settling: Type.Boolean({
      description: "After a failover: provider budgets stay at this replica's share until every replica has written back its calls.",
    }),
    namedPrimary: Type.Optional(
      Nullable(
        Type.String({
          description: `The primary the Sentinels (a Cluster: every primary) named when this replica last asked them itself (every 5 s). Differing from primary for more than a few seconds means a client is stuck; the replica then replaces it. Null for one node. ${LOCAL_ONLY}`,
        }),
      ),
    ),
    rescues: Nullable(
      Type.Integer({
        description:
          'Times this replica replaced a Redis client that did not follow the deployment by itself (it had ended, stayed disconnected from a primary that answered, or stayed on one no longer named). Null without Redis.',
      }),
    ),
    lastRescue: Type.Optional(
      Type.Union([Type.Object({ at: IsoTime, reason: Type.String() }, { additionalProperties: false }), Type.Null()], {
        description: `The last of those rescues, or null. ${LOCAL_ONLY}`,
      }),
    ),
    message: Type.Optional(
      Nullable(Type.String({ description: `What the store reports of its state (it may name Redis nodes). ${LOCAL_ONLY}` })),
    ),
  },
  { additionalProperties: false },
);

const SourceCounts = Type.Object({ 'alpha-vantage': Type.Integer(), yahoo: Type.Integer() }, { additionalProperties: false });

const BrokerStream = Type.Union(
  [
    Type.Object(
      {
        broker: Type.String(),
        role: Type.Union([Type.Literal('local'), Type.Literal('holder'), Type.Literal('relayed')], {
          description:
            'local: this process holds the feed (embedded store); holder: this replica holds it for every replica (Redis); relayed: another replica holds it and relays its ticks.',
        }),
        state: Type.Union(
          [
            Type.Literal('off'),
            Type.Literal('connecting'),
            Type.Literal('connected'),
            Type.Literal('unauthenticated'),
            Type.Literal('disconnected'),
          ],
          { description: "The feed's connection (for a relayed stream, as its holder last said)." },
        ),
        available: Type.Boolean({ description: 'Quotes are answered from the stream now; otherwise snapshots fill the gap.' }),
        subscriptions: Type.Integer({ description: 'Symbols subscribed upstream.' }),
        lastTickAgeMs: Nullable(Type.Integer({ description: 'Age of the newest tick; null before the first.' })),
        reconnects: Type.Integer({ description: 'Reconnections of the feed since it started.' }),
        lastError: Nullable(Type.String({ description: 'What went wrong last; never a token or session id.' })),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: `The broker's real-time quote stream, or null when BROKER_STREAMING=off or the broker has none. ${LOCAL_ONLY}` },
);

const McpUse = Type.Union(
  [
    Type.Object(
      {
        sessions: Type.Integer({ description: 'Open MCP sessions: always 0, /mcp is stateless (every request stands alone).' }),
        calls: Type.Integer({ description: 'Tool calls answered since start, on this replica.' }),
        errors: Type.Integer({ description: 'Of those, the ones answered with an error result (isError).' }),
        tools: Type.Record(Type.String(), Type.Object({ calls: Type.Integer(), errors: Type.Integer() }, { additionalProperties: false }), {
          description: 'Calls and errors by tool name.',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'What AI agents asked through the MCP server (/mcp), or null when MCP=off.' },
);

export const SystemStatus = Type.Object(
  {
    status: OverallStatus,
    reason: Type.String({ description: 'Why the status is what it is, in one line.' }),
    reasons: Type.Array(Type.String()),
    version: Type.Literal('1.0.0'),
    mode: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
    startedAt: IsoTime,
    uptimeSeconds: Type.Integer(),
    checkedAt: IsoTime,
    store: StoreStatus,
    cache: Type.Object(
      {
        entries: Nullable(Type.Integer()),
        bytes: Nullable(Type.Integer()),
        lookups: Type.Object(
          {
            hit: Type.Integer(),
            miss: Type.Integer(),
            stale: Type.Integer(),
            notFound: Type.Integer({
              description:
                'Upstream calls not sent because the provider\'s "not found" for the key is remembered (CACHE_NOT_FOUND_SECONDS).',
            }),
          },
          { additionalProperties: false },
        ),
        hitRatio: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
      },
      { additionalProperties: false },
    ),
    outboundProxy: Type.Optional(OutboundProxy),
    upstreams: Type.Array(UpstreamStatus, {
      description: `Every known upstream area. The broker's row (label, calls, failures) is there for local callers only; for anyone else status, reason and reasons are judged without the broker.`,
    }),
    brokerStream: Type.Optional(BrokerStream),
    dataSources: Type.Object(
      {
        quote: SourceCounts,
        technical: SourceCounts,
      },
      {
        additionalProperties: false,
        description: 'Answers per endpoint by the source that produced them (the X-Data-Source header), since start.',
      },
    ),
    mcp: McpUse,
  },
  { $id: 'SystemStatus', additionalProperties: false, description: 'The service state, read from memory: never an upstream call.' },
);
export type SystemStatus = Static<typeof SystemStatus>;
export type UpstreamStatus = Static<typeof UpstreamStatus>;
export type StoreStatus = Static<typeof StoreStatus>;
export type BrokerStreamStatus = Static<typeof BrokerStream>;

export const LiveResponse = Type.Object(
  { status: Type.Literal('live') },
  { additionalProperties: false, description: 'The process is up and answering.' },
);

export const ReadyResponse = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
    checks: Type.Object(
      {
        config: Type.Boolean({ description: 'The configuration was validated at start.' }),
        store: Type.Boolean({ description: 'The store answers, or Redis was lost and local state took over by design.' }),
      },
      { additionalProperties: false },
    ),
    reason: Nullable(Type.String()),
  },
  { additionalProperties: false, description: 'ready (200) or not_ready (503), with the failing check.' },
);
export type ReadyResponse = Static<typeof ReadyResponse>;
