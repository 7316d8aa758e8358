// Real-time broker quotes (BROKER_STREAMING=auto) against the simulated IBKR gateway and the simulated
// Tastytrade API with its DXLink socket, each market held open so that its instruments tick at their
// session pace (the busiest several times a second). Per broker:
//  1. latency from the simulator's send (IBKR's frame `_updated`; DXLink's event time, a quote without one
//     stamped on receipt; the SSE event id's first part) to the
//     event's bytes at a viewer, at 1, 1,000 and 10,000 viewers of one topic of 10 symbols, in client
//     processes (bench/stream.ts's); targets p99 <= 50 ms at 1,000 and <= 250 ms at 10,000 (the issue's next:
//     100 ms). BENCH_PIN=on runs the service on a CPU of its own, the readers and the simulator on the other, so
//     that the readers do not take the service's CPU (bench/cpu-pinning.ts);
//  2. upstream snapshot calls per minute for 50 streamed symbols (a stream viewer and a REST poller every
//     second), streaming against BROKER_STREAMING=off; target 0 once subscribed;
//  3. memory per subscribed symbol (the feed and the shared stream in a process of their own, heap after GC);
//  4. three replicas on one Redis: upstream sockets opened (target 1), relayed latency, and the takeover
//     when the holder is killed with SIGKILL;
//  5. each fault of the feed with the production timings: how long until ticks flow again, the longest gap a
//     viewer saw meanwhile (snapshots fill it), and whether any other request failed.
// BENCH_SECONDS (default 10) per latency level; BENCH_ECONOMY_SECONDS (default 60) per economy run;
// BENCH_BROKER_STREAM_LEVELS changes the latency levels; BENCH_BROKER_STREAM_PARTS picks parts
// (latency,economy,memory,replicas,faults; all by default); BENCH_BROKER_STREAM_BROKERS picks brokers
// (ibkr,tastytrade; both by default).
//   npm run bench (or: npm run build && tsx bench/broker-stream.ts)
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { Redis } from 'ioredis';
import pino from 'pino';
import { request } from 'undici';
import { RequestPacer } from '../src/broker/request-pacer.js';
import { contractBySymbol } from '../src/sandbox/ibkr/ibkr-contracts.js';
import { createIbkrSimulator, type IbkrSimulator } from '../src/sandbox/ibkr/ibkr-simulator.js';
import type { SimRequestEvent, SimulatedUpstream } from '../src/sandbox/simulated-upstream.js';
import { createTastytradeSimulator, type TastytradeSimulator } from '../src/sandbox/tastytrade/tastytrade-simulator.js';
import { UNIVERSE } from '../src/sandbox/universe.js';
import { SharedQuoteStream } from '../src/stream/shared-quote-stream.js';
import { IbkrBroker } from '../src/upstreams/ibkr/ibkr-broker.js';
import { IbkrQuoteStream } from '../src/upstreams/ibkr/ibkr-quote-stream.js';
import { TastytradeBroker } from '../src/upstreams/tastytrade/tastytrade-broker.js';
import { TastytradeQuoteStream } from '../src/upstreams/tastytrade/tastytrade-quote-stream.js';
import { pinning } from './cpu-pinning.js';
import { type Child, startService } from './processes.js';
import { benchServiceEnv, type Figures, measure, neededFiles, openFileLimits, serviceEnv } from './stream.js';

const LEVELS = (process.env.BENCH_BROKER_STREAM_LEVELS ?? '1,1000,10000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ECONOMY_SECONDS = Number(process.env.BENCH_ECONOMY_SECONDS ?? 60);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** bench/stream.ts's symbols: the same topic the polled bench measures. */
const SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'GOOGL', 'META', 'TSLA', 'SPY', 'QQQ', 'IBM'];
const TOPIC = `/api/stream?brokerQuotes=${SYMBOLS.join(',')}`;
/** Stocks both simulators know (IBKR lists every universe stock with a contract). */
const STOCKS = UNIVERSE.map((i) => i.symbol).filter((s) => contractBySymbol(s) !== undefined && !s.startsWith('^'));
const FIFTY = STOCKS.slice(0, 50);
const TARGETS: Record<number, number> = { 1000: 50, 10000: 250 };
/**
 * A streamed topic sends an event per tick (about 18 a second here) rather than one a second: a client
 * process reads half of bench/stream.ts's share, so the readers are not what the delay measures.
 */
const VIEWERS_PER_CLIENT = Number(process.env.BENCH_VIEWERS_PER_CLIENT ?? 1_250);
const STREAMING = { BROKER_STREAMING: 'auto' };
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
const PARTS = new Set((process.env.BENCH_BROKER_STREAM_PARTS ?? 'latency,economy,memory,replicas,faults').split(','));
const BROKERS = new Set((process.env.BENCH_BROKER_STREAM_BROKERS ?? 'ibkr,tastytrade').split(','));
const PINNING = pinning(false);
const TASTYTRADE_CREDENTIALS = { clientSecret: 'bench-secret', refreshToken: 'bench-refresh-token' };

/** What the parts need of a broker's simulator: its feed's counters and faults, and the service's settings for it. */
interface BenchBroker {
  kind: 'ibkr' | 'tastytrade';
  title: string;
  sim: SimulatedUpstream & { stream: { framesSent: number; accepted: number; openSockets: number; dropAll(): void } };
  env(stateDir: string, extra: Record<string, string>): Record<string, string>;
  /** The REST market data path a snapshot calls. */
  snapshotPath: string;
  tickIntervalMs(symbol: string): number;
  faults: Fault[];
}

function ibkrBench(ibkr: IbkrSimulator): BenchBroker {
  return {
    kind: 'ibkr',
    title: 'IBKR websocket',
    sim: ibkr,
    env: (stateDir, extra) => serviceEnv(ibkr, stateDir, extra),
    snapshotPath: '/v1/api/iserver/marketdata/snapshot',
    tickIntervalMs: (symbol) => ibkr.market.tickIntervalMs(contractBySymbol(symbol)!),
    faults: ibkrFaults(ibkr),
  };
}

function tastytradeBench(sim: TastytradeSimulator): BenchBroker {
  return {
    kind: 'tastytrade',
    title: 'Tastytrade DXLink',
    sim,
    env: (stateDir, extra) =>
      benchServiceEnv(stateDir, {
        BROKER: 'tastytrade',
        TASTYTRADE_URL: sim.origin,
        TASTYTRADE_CLIENT_SECRET: TASTYTRADE_CREDENTIALS.clientSecret,
        TASTYTRADE_REFRESH_TOKEN: TASTYTRADE_CREDENTIALS.refreshToken,
        ...extra,
      }),
    snapshotPath: '/market-data/by-type',
    tickIntervalMs: (symbol) => sim.market.tickIntervalMs({ ours: symbol, kind: 'equity' }),
    faults: tastytradeFaults(sim),
  };
}

// ---------------------------------------------------------------------------------------------------
// A viewer of one stream in this process (the economy and fault runs need one or two, not thousands).

class Viewer {
  readonly at: number[] = [];
  ended = false;
  private res: IncomingMessage | undefined;

  static async open(url: string): Promise<Viewer> {
    const viewer = new Viewer();
    const req = httpRequest(url, { headers: { accept: 'text/event-stream' } });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    viewer.res = res;
    res.setEncoding('utf8');
    const parser = createParser({ onEvent: (event) => event.event === 'brokerQuotes' && viewer.at.push(Date.now()) });
    res.on('data', (chunk: string) => parser.feed(chunk));
    res.on('close', () => {
      viewer.ended = true;
    });
    return viewer;
  }

  /** The longest time without an event between `from` and `to`. */
  longestGap(from: number, to: number): number {
    const times = [from, ...this.at.filter((t) => t > from && t < to), to];
    return Math.max(...times.slice(1).map((t, i) => t - times[i]!));
  }

  close(): void {
    this.res?.destroy();
  }
}

interface StreamStatus {
  state: string;
  available: boolean;
  subscriptions: number;
  lastTickAgeMs: number | null;
  reconnects: number;
  lastError: string | null;
}

async function streamStatus(service: Child): Promise<StreamStatus> {
  const res = await request(`${service.url}/api/system/status`);
  return ((await res.body.json()) as { brokerStream: StreamStatus }).brokerStream;
}

/** Resolves with the time `ready` first held (checked every 100 ms), or rejects after `timeoutMs`. */
async function waitFor(what: string, ready: () => Promise<boolean>, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
  return Date.now();
}

// ---------------------------------------------------------------------------------------------------
// 1. Latency at 1, 1,000 and 10,000 viewers.

/** The service's own figures over a measurement: collection time, and how late its event loop ran. */
interface ServiceFigures {
  gcMsPerSecond: number;
  loopP99Ms: number;
  loopMaxMs: number;
  /** Passes over the topic's viewers (mdp_stream_fan_out_seconds) in the window: the mean, and the bucket holding the 99th percentile. */
  passMeanMs: number;
  passP99UpToMs: number;
}

/** mdp_stream_fan_out_seconds as read: each bucket's cumulative count by its upper bound, the sum and the count. */
interface Passes {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

const METRICS_TOKEN = 'a-bench-metrics-token-of-32-chars';

/** Reads prom-client's default metrics and the hub's passes on the public /metrics (the event loop's delay is reset by each read). */
async function scrape(service: Child): Promise<{ gcSeconds: number; loopP99: number; loopMax: number; passes: Passes }> {
  const res = await request(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.body.text();
  const value = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);
  const buckets = new Map(
    [...text.matchAll(/^mdp_stream_fan_out_seconds_bucket\{le="([^"]+)"\} (\S+)$/gm)].map((m) => [Number(m[1]), Number(m[2])]),
  );
  return {
    gcSeconds: value(/^nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)$/gm),
    loopP99: value(/^nodejs_eventloop_lag_p99_seconds (\S+)$/gm),
    loopMax: value(/^nodejs_eventloop_lag_max_seconds (\S+)$/gm),
    passes: {
      buckets,
      sum: value(/^mdp_stream_fan_out_seconds_sum (\S+)$/gm),
      count: value(/^mdp_stream_fan_out_seconds_count (\S+)$/gm),
    },
  };
}

/** The window's passes: their mean, and the upper bound of the bucket that holds the 99th percentile (ms). */
function passFigures(from: Passes, to: Passes): { passMeanMs: number; passP99UpToMs: number } {
  const count = to.count - from.count;
  const bound = [...to.buckets].find(([le, n]) => n - (from.buckets.get(le) ?? 0) >= 0.99 * count)?.[0] ?? Number.NaN;
  return { passMeanMs: ((to.sum - from.sum) / count) * 1000, passP99UpToMs: bound * 1000 };
}

/** A measurement window reading the service's figures at its start and its end. */
function serviceWindow(service: Child): { window: { start(): Promise<void>; stop(): Promise<void> }; figures(): ServiceFigures } {
  let from: { gcSeconds: number; passes: Passes; at: number } = { gcSeconds: 0, passes: { buckets: new Map(), sum: 0, count: 0 }, at: 0 };
  let figures: ServiceFigures = {
    gcMsPerSecond: Number.NaN,
    loopP99Ms: Number.NaN,
    loopMaxMs: Number.NaN,
    passMeanMs: Number.NaN,
    passP99UpToMs: Number.NaN,
  };
  return {
    window: {
      start: async () => {
        const { gcSeconds, passes } = await scrape(service);
        from = { gcSeconds, passes, at: Date.now() };
      },
      stop: async () => {
        const to = await scrape(service);
        figures = {
          gcMsPerSecond: ((to.gcSeconds - from.gcSeconds) * 1000 * 1000) / (Date.now() - from.at),
          loopP99Ms: to.loopP99 * 1000,
          loopMaxMs: to.loopMax * 1000,
          ...passFigures(from.passes, to.passes),
        };
      },
    },
    figures: () => figures,
  };
}

async function latency(b: BenchBroker, market: { open: boolean }, stateDir: string): Promise<Figures[]> {
  // With BENCH_PIN=on, the service on a CPU of its own; this process (the simulator) and the readers it forks on the other.
  const unpin = PINNING.pinToLoadCpu(process.pid);
  const service = await startService(b.env(join(stateDir, `latency-${b.kind}`), { ...STREAMING, METRICS_TOKEN }), PINNING.serverLaunch);
  try {
    const results: Figures[] = [];
    for (const level of LEVELS) {
      let framesBefore = 0;
      let started = 0;
      const own = serviceWindow(service);
      // Viewers connect to a closed market (no ticks, so no fan-out competes with the connect storm); it opens once they are in.
      market.open = false;
      const figures = await measure(b.sim, [service], level, {
        path: TOPIC,
        seconds: SECONDS,
        // At least four readers, so that no one of them is what the delay measures.
        perClient: Math.min(VIEWERS_PER_CLIENT, Math.max(1, Math.ceil(level / 4))),
        onOpened: () => {
          market.open = true;
          framesBefore = b.sim.stream.framesSent;
          started = Date.now();
        },
        window: own.window,
      });
      const { gcMsPerSecond, loopP99Ms, loopMaxMs, passMeanMs, passP99UpToMs } = own.figures();
      const ticksPerSecond = ((b.sim.stream.framesSent - framesBefore) / (Date.now() - started)) * 1000;
      results.push(figures);
      console.log(
        `${String(level).padStart(8)} | ${String(figures.p50).padStart(4)} / ${String(figures.p99).padStart(4)} / ${String(figures.max).padStart(5)} ms | ${figures.eventsPerViewerPerSecond.toFixed(1).padStart(6)} | ${String(figures.skipped).padStart(7)} | ${ticksPerSecond.toFixed(1).padStart(7)} | ${figures.cpuPercent.toFixed(0).padStart(3)} % | ${(figures.rss / 1_048_576).toFixed(0).padStart(3)} MiB | ${String(figures.getP99).padStart(4)} ms | ${figures.clientElu.toFixed(2).padStart(10)} | ${figures.load.toFixed(2)} | ${String(figures.firstViewer).padStart(4)} / ${String(figures.lastViewer).padStart(4)} ms | ${gcMsPerSecond.toFixed(1).padStart(5)} ms/s | ${loopP99Ms.toFixed(0).padStart(4)} / ${loopMaxMs.toFixed(0).padStart(4)} ms | ${level < 1000 ? '    —   ' : `${cpuPerWrite(figures).toFixed(1).padStart(5)} µs`} | ${passMeanMs.toFixed(1).padStart(6)} / ≤ ${passP99UpToMs} ms`,
      );
    }
    return results;
  } finally {
    await service.stop();
    unpin();
  }
}

/** The service's CPU time per event written to a viewer, in µs: what bench/fan-out-floor.ts's bare writes are read against. */
function cpuPerWrite(figures: Figures): number {
  return ((figures.cpuPercent / 100) * 1e6) / (figures.viewers * figures.eventsPerViewerPerSecond);
}

// ---------------------------------------------------------------------------------------------------
// 2. Snapshot calls per minute for 50 streamed symbols: streaming against off.

async function economy(b: BenchBroker, stateDir: string, mode: 'auto' | 'off'): Promise<number> {
  const service = await startService(b.env(join(stateDir, `economy-${b.kind}-${mode}`), { BROKER_STREAMING: mode }));
  const viewer = await Viewer.open(`${service.url}/api/stream?brokerQuotes=${FIFTY.join(',')}`);
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const res = await request(`${service.url}/api/broker/quotes?symbols=${FIFTY.join(',')}`);
      await res.body.dump();
      await sleep(1_000);
    }
  })();
  try {
    // Subscribed: conids looked up (at the gateway's pacing) and the first frames in.
    await sleep(15_000);
    const calls: number[] = [];
    const onCall = (event: SimRequestEvent) => event.path === b.snapshotPath && calls.push(Date.now());
    b.sim.on('request', onCall);
    await sleep(ECONOMY_SECONDS * 1000);
    b.sim.off('request', onCall);
    return (calls.length / ECONOMY_SECONDS) * 60;
  } finally {
    polling = false;
    await poller;
    viewer.close();
    await service.stop();
  }
}

// ---------------------------------------------------------------------------------------------------
// 3. Memory per subscribed symbol, in a process of its own (this one holds the simulator).

async function memoryChild(kind: BenchBroker['kind'], baseUrl: string, count: number): Promise<void> {
  const logger = pino({ level: 'silent' });
  const gc = (globalThis as { gc?: () => void }).gc!;
  const broker =
    kind === 'ibkr'
      ? new IbkrBroker({
          url: baseUrl,
          tlsVerify: false,
          timeoutMs: 8_000,
          logger,
          tickleIntervalMs: 0,
          // The simulator's pacing is off for this run: lookups are not what is measured.
          gateway: { pacer: new RequestPacer({ name: 'bench', perWindow: 1_000, windowMs: 1_000, minIntervalMs: 0, maxWaitMs: 10_000 }) },
        })
      : new TastytradeBroker({ url: baseUrl, ...TASTYTRADE_CREDENTIALS, timeoutMs: 8_000, logger });
  const shared = new SharedQuoteStream({
    broker: kind,
    create: () =>
      broker instanceof IbkrBroker
        ? new IbkrQuoteStream({ url: baseUrl, tlsVerify: false, session: broker, logger })
        : new TastytradeQuoteStream({ session: broker, logger }),
    scope: 'bench',
    logger,
  });
  const seen = new Set<string>();
  shared.onQuote((u) => seen.add(u.symbol));
  shared.start();
  const symbols = STOCKS;
  const heap = async () => {
    for (let i = 0; i < 3; i += 1) {
      gc();
      await sleep(50);
    }
    return process.memoryUsage().heapUsed;
  };
  const holdUntilStreamed = async (list: string[]) => {
    shared.hold({}, list);
    while (!list.every((s) => seen.has(s))) await sleep(100);
    await sleep(1_000);
  };
  await holdUntilStreamed(symbols.slice(0, 1));
  const before = await heap();
  await holdUntilStreamed(symbols.slice(0, count + 1));
  const after = await heap();
  process.send!({ perSymbol: (after - before) / count, count });
  await shared.close();
  await broker.close();
}

async function memoryPerSymbol(kind: BenchBroker['kind']): Promise<{ perSymbol: number; count: number }> {
  const sim =
    kind === 'ibkr'
      ? await createIbkrSimulator({ pacing: false, sessionAt: () => 'regular' })
      : createTastytradeSimulator({ ...TASTYTRADE_CREDENTIALS, sessionAt: () => 'regular' });
  await sim.listen();
  try {
    const count = Math.min(400, STOCKS.length - 1);
    const url = 'baseUrl' in sim ? sim.baseUrl : sim.origin;
    const child = fork(fileURLToPath(import.meta.url), ['--memory', kind, url, String(count)], {
      execArgv: ['--import', 'tsx', '--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const [message] = (await once(child, 'message')) as [{ perSymbol: number; count: number }];
    await once(child, 'exit');
    return message;
  } finally {
    await sim.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// 4. Three replicas on one Redis.

async function replicas(b: BenchBroker, stateDir: string): Promise<void> {
  const prefix = `mdp-bench-broker-stream:${randomBytes(4).toString('hex')}:`;
  const { sim } = b;
  const acceptedBefore = sim.stream.accepted;
  const services = await Promise.all(
    [0, 1, 2].map((i) => startService(b.env(join(stateDir, `r${i}-${b.kind}`), { ...STREAMING, REDIS_URL, REDIS_KEY_PREFIX: prefix }))),
  );
  const redis = new Redis(REDIS_URL);
  try {
    const figures = await measure(sim, services, 150, { path: TOPIC, seconds: SECONDS, perClient: VIEWERS_PER_CLIENT });
    const sockets = sim.stream.accepted - acceptedBefore;
    console.log(
      `3 replicas on one Redis, 150 viewers spread over them: ${sockets} upstream socket${sockets === 1 ? '' : 's'} opened, ${sim.stream.openSockets} open (target 1: ${verdict(sockets === 1 && sim.stream.openSockets === 1)}); delay p50 / p99 / max ${figures.p50} / ${figures.p99} / ${figures.max} ms; ${figures.eventsPerViewerPerSecond.toFixed(1)} events/s/viewer`,
    );
    // The lease (its value starts with the holder's pid) is the one broker stream lease under this prefix.
    const [lease] = await redis.keys(`${prefix}lock:stream:*:brokerQuotes`);
    const holder = lease === undefined ? Number.NaN : Number((await redis.get(lease))?.split(':')[0]);
    const victim = services.find((s) => s.process.pid === holder);
    if (victim === undefined) {
      console.log('  (the holder could not be named from its lease: takeover not measured)');
      return;
    }
    const viewer = await Viewer.open(`${services.find((s) => s !== victim)!.url}${TOPIC}`);
    await sleep(2_000);
    const accepted = sim.stream.accepted;
    const killedAt = Date.now();
    victim.process.kill('SIGKILL');
    await once(victim.process, 'exit');
    const connectedAt = await waitFor('the takeover', async () => sim.stream.accepted > accepted && sim.stream.openSockets === 1, 60_000);
    const events = viewer.at.length;
    const resumedAt = await waitFor('events after the takeover', async () => viewer.at.length > events, 30_000);
    console.log(
      `  holder killed (SIGKILL): another replica's socket ${connectedAt - killedAt} ms later, its viewers' events ${resumedAt - killedAt} ms later (longest gap ${viewer.longestGap(killedAt, resumedAt)} ms, snapshots filling it); ${sim.stream.openSockets} socket open`,
    );
    viewer.close();
  } finally {
    redis.disconnect();
    await Promise.all(services.map((s) => s.stop()));
    const cleanup = new Redis(REDIS_URL);
    const keys = await cleanup.keys(`${prefix}*`);
    if (keys.length > 0) await cleanup.del(...keys);
    cleanup.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------------
// 5. Faults, with the production timings.

interface Fault {
  name: string;
  inject(): void;
  /** Ends a fault that does not end by itself, HOLD_MS after it began. */
  end?(): void;
  /** Recovery needs a new socket (else only the subscriptions are requested again). */
  reconnects: boolean;
}

const HOLD_MS = 5_000;

/** A fault switched on for HOLD_MS with every socket dropped, then off. */
function held(name: string, faults: Record<string, boolean>, key: string, drop: () => void): Fault {
  return {
    name: `${name} (${HOLD_MS / 1000} s)`,
    reconnects: true,
    inject: () => {
      faults[key] = true;
      drop();
    },
    end: () => {
      faults[key] = false;
    },
  };
}

function tastytradeFaults(s: TastytradeSimulator): Fault[] {
  const faults = s.stream.faults as unknown as Record<string, boolean>;
  const drop = () => s.stream.dropAll();
  return [
    { name: 'dropped socket', reconnects: true, inject: drop },
    held('refused upgrade (502)', faults, 'refuseUpgrade', drop),
    held('refused AUTH', faults, 'refuseAuth', drop),
    { name: 'quote token expired under the socket', reconnects: true, inject: () => s.stream.expireTokens() },
    { name: 'silent server (dead socket)', reconnects: true, inject: () => s.stream.silenceOpenSockets() },
  ];
}

function ibkrFaults(s: IbkrSimulator): Fault[] {
  const faults = s.stream.faults as unknown as Record<string, boolean>;
  const drop = () => s.stream.dropAll();
  return [
    { name: 'dropped socket', reconnects: true, inject: drop },
    held('refused upgrade', faults, 'refuseUpgrade', drop),
    held('refused session', faults, 'refuseSession', drop),
    {
      name: 'expired session value and cookie',
      reconnects: true,
      inject: () => {
        s.rotateSessionId();
        drop();
      },
    },
    { name: 'subscriptions expired, heartbeat going on', reconnects: false, inject: () => s.stream.expireSubscriptions() },
    { name: 'silent heartbeat (dead socket)', reconnects: true, inject: () => s.stream.silenceOpenSockets() },
    { name: 'brokerage session lost', reconnects: true, inject: () => s.loseSessionSilently() },
  ];
}

async function faults(b: BenchBroker, stateDir: string): Promise<void> {
  const service = await startService(b.env(join(stateDir, `faults-${b.kind}`), STREAMING));
  const busy = [...SYMBOLS].sort((x, y) => b.tickIntervalMs(x) - b.tickIntervalMs(y));
  const viewer = await Viewer.open(`${service.url}/api/stream?brokerQuotes=${busy.slice(0, 3).join(',')}`);
  const flowing = async () => {
    const s = await streamStatus(service);
    return s.available && s.lastTickAgeMs !== null && s.lastTickAgeMs < 1_000;
  };
  try {
    await waitFor('ticks before the faults', flowing);
    console.log(' fault                                      | recovered after | longest gap at the viewer | other requests failed');
    for (const fault of b.faults) {
      const before = (await streamStatus(service)).reconnects;
      let failed = 0;
      let probing = true;
      const probe = (async () => {
        while (probing) {
          try {
            const res = await request(`${service.url}/api/system/live`);
            await res.body.dump();
            if (res.statusCode !== 200) failed += 1;
          } catch {
            failed += 1;
          }
          await sleep(100);
        }
      })();
      const injectedAt = Date.now();
      fault.inject();
      let from = injectedAt;
      if (fault.end !== undefined) {
        await sleep(HOLD_MS);
        fault.end();
        from = Date.now();
      }
      // Ticks must have stopped first (a fault the feed has not noticed yet is not recovered from).
      if (!fault.reconnects) await waitFor(`${fault.name}: ticks stopped`, async () => !(await flowing()), 30_000);
      const recoveredAt = await waitFor(fault.name, async () => {
        const s = await streamStatus(service);
        return (!fault.reconnects || s.reconnects > before) && s.available && s.lastTickAgeMs !== null && s.lastTickAgeMs < 1_000;
      });
      probing = false;
      await probe;
      console.log(
        ` ${fault.name.padEnd(42)} | ${`${((recoveredAt - from) / 1000).toFixed(1)} s`.padStart(15)} | ${`${viewer.longestGap(injectedAt, recoveredAt)} ms`.padStart(25)} | ${failed}`,
      );
      await sleep(2_000);
    }
    console.log(
      ` (recovered after: from the fault's end, or its start when it ends by itself, to ticks flowing again; the viewer stayed connected: ${!viewer.ended})`,
    );
  } finally {
    viewer.close();
    await service.stop();
  }
}

// ---------------------------------------------------------------------------------------------------

export default async function brokerStreamBench(): Promise<void> {
  const { hard } = openFileLimits();
  if (hard < neededFiles(Math.max(...LEVELS)))
    throw new Error(`open files: hard limit ${hard}, ${neededFiles(Math.max(...LEVELS))} needed`);
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-broker-stream-'));
  const market = { open: true };
  const sessionAt = () => (market.open ? 'regular' : 'closed') as 'regular' | 'closed';
  try {
    if (BROKERS.has('ibkr')) {
      const ibkr = await createIbkrSimulator({ sessionAt });
      await ibkr.listen();
      try {
        await benchBroker(ibkrBench(ibkr), market, stateDir);
      } finally {
        await ibkr.close();
      }
    }
    if (BROKERS.has('tastytrade')) {
      const tastytrade = createTastytradeSimulator({ ...TASTYTRADE_CREDENTIALS, sessionAt });
      await tastytrade.listen();
      try {
        await benchBroker(tastytradeBench(tastytrade), market, stateDir);
      } finally {
        await tastytrade.close();
      }
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function benchBroker(b: BenchBroker, market: { open: boolean }, stateDir: string): Promise<void> {
  console.log(
    `\nbroker stream (${b.title}, simulated market held open): topic of ${SYMBOLS.length} symbols, ${SECONDS} s per level (node ${process.version}); latency: ${PINNING.description}`,
  );
  if (PARTS.has('latency')) {
    console.log(
      ' viewers | delay p50 / p99 / max | ev/s/v | skipped | ticks/s | CPU  |   RSS   | GET p99 | client ELU | load | first / last viewer | GC      | loop delay p99 / max | CPU a write | pass mean / p99',
    );
    const results = await latency(b, market, stateDir);
    console.log(
      ' (delay: from the simulator sending the tick to its event at a viewer; ev/s/v: events a second per viewer; skipped: events superseded during a fan-out;',
    );
    console.log(
      ' ticks/s: market data frames the simulator sent; GET: /api/system/live on the same process meanwhile; load: the 1-minute load average, this bench included;',
    );
    console.log(
      " first / last viewer: the median over the events of the delay at the first viewer an event reached and at the last (the spread is the fan-out's queue of writes);",
    );
    console.log(
      " GC: the service's collection time per second of the window; loop delay: how late its event loop ran (prom-client's, 10 ms resolution);",
    );
    console.log(
      " CPU a write: the service's CPU over the events its viewers got, everything included; bench/fan-out-floor.ts gives a bare loop's on this machine; from 1,000 viewers, where the writes are most of it;",
    );
    console.log(
      " pass: the service's own timing of a pass over the viewers (mdp_stream_fan_out_seconds), its mean and the bucket holding its p99)",
    );
    for (const [level, target] of Object.entries(TARGETS)) {
      const f = results.find((r) => r.viewers === Number(level));
      if (f !== undefined) console.log(`target: delay p99 <= ${target} ms at ${level} viewers: ${f.p99} ms, ${verdict(f.p99 <= target)}`);
    }
  }
  if (PARTS.has('economy')) {
    const streamingCalls = await economy(b, stateDir, 'auto');
    const offCalls = await economy(b, stateDir, 'off');
    console.log(
      `snapshot calls per minute, 50 symbols (a stream viewer and a REST poll every second): streaming ${streamingCalls.toFixed(1)}, off ${offCalls.toFixed(1)}; target 0 once subscribed: ${verdict(streamingCalls === 0)}`,
    );
  }
  if (PARTS.has('memory')) {
    const memory = await memoryPerSymbol(b.kind);
    console.log(
      `memory per subscribed symbol (the feed and the shared stream, heap after GC, ${memory.count} symbols): ${(memory.perSymbol / 1024).toFixed(2)} KiB`,
    );
  }
  if (PARTS.has('replicas')) await replicas(b, stateDir);
  if (PARTS.has('faults')) {
    console.log('\nfaults of the feed, production timings (one service, a viewer of 3 busy symbols):');
    await faults(b, stateDir);
  }
}

if (process.argv.includes('--memory')) {
  const at = process.argv.indexOf('--memory');
  await memoryChild(process.argv[at + 1] as BenchBroker['kind'], process.argv[at + 2]!, Number(process.argv[at + 3]));
} else if (import.meta.url === `file://${process.argv[1]}`) await brokerStreamBench();
