// Stream fan-out: 1, 1,000, 5,000 and 10,000 concurrent /api/stream clients on the same 10 broker
// symbols, against one service process and a standalone IBKR simulator that counts snapshot calls. Per
// level: upstream snapshot calls per second (one poller whatever the viewers: the 1 s fresh window), events
// per second at each viewer (every event reaches every viewer: the same cadence), the delay from the
// upstream answer (the event id starts with the cache entry's time) to the event's arrival at a client,
// the server's RSS per connection (against the 1-viewer level) and its CPU, and the time of a GET to the
// same process meanwhile (a fan-out that held the event loop would hold it too). Then three replicas on
// one Redis with 150 viewers spread over them: calls per second equal to one viewer's.
//
// The viewers run in client processes of VIEWERS_PER_CLIENT streams each (this file, started with
// `--viewers`), so reading 10,000 streams is not one event loop's work: each reports its event-loop
// utilisation and CPU over the measurement, printed beside the figures, to show it was not the bottleneck.
// A client takes an event's time when its bytes arrive, before parsing, and parses only the `id:` and
// `event:` lines.
// 10,000 streams need as many descriptors in the service. Node raises its soft `ulimit -n` to the hard
// limit as it starts (so do the service and the clients); under a hard limit below that the bench stops
// at once and says what to raise.
// Loopback only; bounded: BENCH_SECONDS (default 10) of measurement per level. BENCH_STREAM_LEVELS and
// BENCH_VIEWERS_PER_CLIENT change the levels and the clients' share (the figures should not move with it).
//   npm run bench:stream            (or as part of npm run bench)
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { createIbkrSimulator, type IbkrSimulator } from '../src/sandbox/ibkr/ibkr-simulator.js';
import type { SimRequestEvent, SimulatedUpstream } from '../src/sandbox/simulated-upstream.js';
import { type Child, startService } from './processes.js';

const SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'GOOGL', 'META', 'TSLA', 'SPY', 'QQQ', 'IBM'];
const LEVELS = (process.env.BENCH_STREAM_LEVELS ?? '1,1000,5000,10000').split(',').map(Number);
const REPLICA_VIEWERS = 150;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const VIEWERS_PER_CLIENT = Number(process.env.BENCH_VIEWERS_PER_CLIENT ?? 2_500);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SNAPSHOT = '/v1/api/iserver/marketdata/snapshot';
const PATH = `/api/stream?brokerQuotes=${SYMBOLS.join(',')}`;
/** The targets: every viewer gets the topic's 1 event a second, and the last of 10,000 within 250 ms. */
const TARGET_EVENTS = 1;
/** The cadence is the 1 s fresh window counted from the upstream answer, +5 ms: 0.99 on loopback. */
const EVENTS_TOLERANCE = 0.02;
const TARGET_P99_MS = 250;
const TARGET_AT = 10_000;
/** The service's descriptors: one a stream, and the rest (listeners, upstream sockets, files). */
const SPARE_FILES = 1_000;

// ---------------------------------------------------------------------------------------------------
// Client process: opens its share of the viewers, measures between `start` and `stop`.

type ToClient = { type: 'open'; urls: string[]; count: number; path: string } | { type: 'start' } | { type: 'stop' };

interface ClientReport {
  type: 'report';
  delays: number[];
  /** Per viewer: events in the window, the time between the first's and the last's upstream answers, their sequence numbers. */
  events: number[];
  spans: number[];
  firstSequences: number[];
  lastSequences: number[];
  /** Each event any viewer of this client got in the window: sequence, and delays at its first and last viewer. */
  seen: [number, number, number][];
  elu: number;
  cpuPercent: number;
}

type FromClient = { type: 'opened' } | { type: 'failed'; message: string } | ClientReport;

const ID = Buffer.from('id: ');
const EVENT = Buffer.from('event: ');
const TOPIC_EVENT = Buffer.from('brokerQuotes');

/**
 * One stream: the SSE lines `id:` and `event:` read straight from the bytes (a `data:` line, the
 * ~2 KB body, is skipped without being decoded), an event counted at the blank line that ends it.
 */
class Viewer {
  events = 0;
  first = 0;
  last = 0;
  firstSequence = 0;
  lastSequence = 0;
  private socket: Socket | undefined;
  /** The start of a line cut by the end of a chunk, when it is one this reader needs. */
  private partial: Buffer | undefined;
  /** In the middle of a line it skips. */
  private skipping = false;
  private answeredAt = 0;
  private sequence = 0;
  private ofTopic = false;

  constructor(private readonly client: ViewerClient) {}

  /**
   * The request written on a socket of its own and the answer read as it comes, chunked framing and all:
   * node:http's parser and response stream kept a reader's event loop two fifths busier, and at 10,000
   * viewers the readers share the service's two cores (broker stream, IBKR, 10,000 viewers, one run each on
   * 2026-12-04: the readers' event-loop use 0.27 against 0.19, p99 172 against 146 ms). The head's lines and the
   * chunks' size lines are neither `id:` nor `event:` lines, and a frame is one chunk, so they pass unread.
   */
  open(url: string, path: string): Promise<void> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) });
      this.socket = socket;
      let head = true;
      socket.once('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`));
      socket.on('data', (chunk: Buffer) => {
        if (head) {
          head = false;
          if (chunk.toString('latin1', 0, 12) !== 'HTTP/1.1 200') {
            socket.destroy();
            return reject(new Error(`stream answered ${chunk.toString('latin1', 9, 12)}`));
          }
        }
        const before = this.events;
        this.read(chunk, Date.now());
        if (before === 0 && this.events > 0) resolve();
      });
      // Before the first event, a refused or reset connection (openRetrying tries again); after it, nothing to do.
      socket.on('error', reject);
    });
  }

  close(): void {
    this.socket?.destroy();
  }

  private read(chunk: Buffer, now: number): void {
    let buffer = chunk;
    if (this.partial !== undefined) {
      buffer = Buffer.concat([this.partial, chunk]);
      this.partial = undefined;
    }
    let start = 0;
    while (start < buffer.length) {
      const end = buffer.indexOf(10, start);
      if (end < 0) {
        // A cut line: kept when it may be one this reader parses, else skipped to its end.
        if (!this.skipping && buffer[start] !== 0x64) this.partial = buffer.subarray(start);
        else this.skipping = true;
        return;
      }
      if (this.skipping) this.skipping = false;
      else this.line(buffer, start, end, now);
      start = end + 1;
    }
  }

  private line(buffer: Buffer, start: number, end: number, now: number): void {
    if (end === start) {
      if (this.ofTopic) this.client.event(this, now, this.answeredAt, this.sequence);
      this.ofTopic = false;
      return;
    }
    const length = end - start;
    if (length > ID.length && buffer.compare(ID, 0, ID.length, start, start + ID.length) === 0) {
      // `id: <ms when the upstream answered>-<sequence of the producer>`
      const dash = buffer.indexOf(0x2d, start);
      this.answeredAt = Number(buffer.toString('latin1', start + ID.length, dash));
      this.sequence = Number(buffer.toString('latin1', dash + 1, end));
    } else if (length === EVENT.length + TOPIC_EVENT.length && buffer.compare(EVENT, 0, EVENT.length, start, start + EVENT.length) === 0) {
      this.ofTopic = buffer.compare(TOPIC_EVENT, 0, TOPIC_EVENT.length, start + EVENT.length, end) === 0;
    }
  }
}

class ViewerClient {
  readonly viewers: Viewer[] = [];
  measuring = false;
  delays: number[] = [];
  seen = new Map<number, [number, number, number]>();

  event(viewer: Viewer, now: number, answeredAt: number, sequence: number): void {
    viewer.events += 1;
    if (!this.measuring) return;
    const delay = now - answeredAt;
    this.delays.push(delay);
    const spread = this.seen.get(sequence);
    if (spread === undefined) this.seen.set(sequence, [sequence, delay, delay]);
    else spread[2] = delay;
    // The events' own times (their upstream answers), not their arrivals: the cadence of what a viewer
    // got, not the jitter of when.
    if (viewer.first === 0) {
      viewer.first = answeredAt;
      viewer.firstSequence = sequence;
    }
    viewer.last = answeredAt;
    viewer.lastSequence = sequence;
  }

  async open(urls: string[], count: number, path: string): Promise<void> {
    // In batches, so the connect storm itself is not what is measured.
    for (let i = 0; i < count; i += 250) {
      const batch = Array.from({ length: Math.min(250, count - i) }, () => new Viewer(this));
      await Promise.all(batch.map((v, j) => openRetrying(v, urls[(i + j) % urls.length]!, path)));
      this.viewers.push(...batch);
    }
  }
}

/**
 * A viewer's connection, tried again when the connect storm overflows the service's accept queue (the kernel
 * then resets some connections: "SYN flooding" in its log), as a browser's EventSource would retry.
 */
async function openRetrying(viewer: Viewer, url: string, path: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await viewer.open(url, path);
    } catch (error) {
      if (attempt === 5 || (error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
      await sleep(100 * attempt);
    }
  }
}

async function runClient(): Promise<void> {
  const client = new ViewerClient();
  let elu = performance.eventLoopUtilization();
  let cpu = process.cpuUsage();
  let startedAt = 0;
  const send = (message: FromClient) => process.send!(message);
  process.on('message', (message: ToClient) => {
    if (message.type === 'open') {
      client.open(message.urls, message.count, message.path).then(
        () => send({ type: 'opened' }),
        (error: unknown) => send({ type: 'failed', message: String(error) }),
      );
    } else if (message.type === 'start') {
      for (const viewer of client.viewers) viewer.events = viewer.first = viewer.last = 0;
      client.delays = [];
      client.seen = new Map();
      client.measuring = true;
      elu = performance.eventLoopUtilization();
      cpu = process.cpuUsage();
      startedAt = performance.now();
    } else {
      client.measuring = false;
      const used = process.cpuUsage(cpu);
      const report: ClientReport = {
        type: 'report',
        delays: client.delays,
        events: client.viewers.map((v) => v.events),
        spans: client.viewers.map((v) => v.last - v.first),
        firstSequences: client.viewers.map((v) => v.firstSequence),
        lastSequences: client.viewers.map((v) => v.lastSequence),
        seen: [...client.seen.values()],
        elu: performance.eventLoopUtilization(elu).utilization,
        cpuPercent: ((used.user + used.system) / 1000 / (performance.now() - startedAt)) * 100,
      };
      for (const viewer of client.viewers) viewer.close();
      process.send!(report, () => process.disconnect());
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// The bench.

/** Soft and hard limits of open files of this process (Node has raised the soft one to the hard one). */
export function openFileLimits(): { soft: number; hard: number } {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'))!;
  const [soft, hard] = line
    .replace('Max open files', '')
    .trim()
    .split(/\s+/)
    .map((v) => (v === 'unlimited' ? Infinity : Number(v)));
  return { soft: soft!, hard: hard! };
}

/** Descriptors the service needs for `viewers` streams. */
export const neededFiles = (viewers = Math.max(...LEVELS)) => viewers + SPARE_FILES;

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D/g, '')) * 1024;
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds the whole machine spent busy (every core), from /proc/stat. */
function machineBusySeconds(): number {
  const [, user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .map(Number);
  void idle;
  void iowait;
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Calls a second from the times of the calls: intervals over the time they span. */
function rate(times: number[]): number {
  return times.length < 2 ? Number.NaN : ((times.length - 1) / (times.at(-1)! - times[0]!)) * 1000;
}

export interface Figures {
  viewers: number;
  clients: number;
  callsPerSecond: number;
  /** Mean over viewers of each one's events a second (intervals between the answers of its first and last event). */
  eventsPerViewerPerSecond: number;
  /** Events a viewer did not get between its first and last in the window (superseded during a fan-out). */
  skipped: number;
  /** A GET to the same process every 10 ms meanwhile: what a fan-out holding the event loop costs the other requests. */
  getP99: number;
  getMax: number;
  /** Over the events: the median of the delay at the first viewer it reached, and at the last. */
  firstViewer: number;
  lastViewer: number;
  rss: number;
  cpuPercent: number;
  p50: number;
  p99: number;
  max: number;
  clientElu: number;
  clientCpuPercent: number;
  /** CPU the rest of the machine used meanwhile (other engineers' builds and tests): machine busy time less this bench's processes. */
  othersCpuPercent: number;
  load: number;
}

class ClientProcess {
  private readonly messages: FromClient[] = [];
  private waiting: (() => void) | undefined;

  constructor(readonly child: ChildProcess) {
    child.on('message', (message: FromClient) => {
      this.messages.push(message);
      this.waiting?.();
    });
  }

  static start(): ClientProcess {
    const child = fork(fileURLToPath(import.meta.url), ['--viewers'], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new ClientProcess(child);
  }

  send(message: ToClient): void {
    this.child.send(message);
  }

  async next(): Promise<FromClient> {
    while (this.messages.length === 0) {
      // Its messages are all in once the channel has closed ('exit' may come before the last of them).
      if (!this.child.connected) throw new Error(`a client process left without answering (exit code ${this.child.exitCode})`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        this.child.once('disconnect', resolve);
      });
      this.waiting = undefined;
    }
    return this.messages.shift()!;
  }

  async exit(): Promise<void> {
    if (this.child.exitCode === null) await once(this.child, 'exit');
  }
}

/** GET /api/system/live one after another, 10 ms apart, for `ms`: each one's time in ms. */
async function probeRequests(url: string, ms: number): Promise<number[]> {
  const pool = new Pool(url, { connections: 1 });
  const times: number[] = [];
  const until = performance.now() + ms;
  try {
    while (performance.now() < until) {
      const started = performance.now();
      const res = await pool.request({ path: '/api/system/live', method: 'GET' });
      await res.body.dump();
      times.push(Math.round(performance.now() - started));
      await sleep(10);
    }
  } finally {
    await pool.close();
  }
  return times;
}

export interface MeasureOptions {
  /** The stream URL's path and query (default: this bench's polled topic). */
  path?: string;
  seconds?: number;
  /** Viewers per client process. */
  perClient?: number;
  /** Called once every viewer is open, before the measurement settles (a bench starts its ticks here). */
  onOpened?: () => void;
  /** Called as the measurement starts and as it stops (a bench reads the service's own figures over the window). */
  window?: { start(): Promise<void>; stop(): Promise<void> };
}

/** Opens `count` viewers spread over `services`, measures for `seconds`, closes them. */
export async function measure(ibkr: SimulatedUpstream, services: Child[], count: number, options: MeasureOptions = {}): Promise<Figures> {
  const { path = PATH, seconds: measureSeconds = SECONDS, perClient = VIEWERS_PER_CLIENT } = options;
  const clients = Array.from({ length: Math.ceil(count / perClient) }, () => ClientProcess.start());
  const urls = services.map((s) => s.url);
  for (const [i, client] of clients.entries()) client.send({ type: 'open', urls, count: Math.min(perClient, count - i * perClient), path });
  for (const client of clients) {
    const opened = await client.next();
    if (opened.type !== 'opened') throw new Error(`viewers did not open: ${opened.type === 'failed' ? opened.message : opened.type}`);
  }
  options.onOpened?.();
  await sleep(1_500);
  const pid = services[0]!.process.pid!;
  const calls: number[] = [];
  const onCall = (event: SimRequestEvent) => event.path === SNAPSHOT && calls.push(Date.now());
  ibkr.on('request', onCall);
  await options.window?.start();
  const cpu = cpuSeconds(pid);
  const machine = machineBusySeconds();
  const own = process.cpuUsage();
  const started = performance.now();
  for (const client of clients) client.send({ type: 'start' });
  const probe = probeRequests(services[0]!.url, measureSeconds * 1000);
  await sleep(measureSeconds * 1000);
  for (const client of clients) client.send({ type: 'stop' });
  await options.window?.stop();
  const requestTimes = (await probe).sort((a, b) => a - b);
  const seconds = (performance.now() - started) / 1000;
  const cpuPercent = ((cpuSeconds(pid) - cpu) / seconds) * 100;
  const machinePercent = ((machineBusySeconds() - machine) / seconds) * 100;
  const ownUsed = process.cpuUsage(own);
  const benchPercent = ((ownUsed.user + ownUsed.system) / 1e6 / seconds) * 100;
  const rss = rssBytes(pid);
  ibkr.off('request', onCall);
  const reports: ClientReport[] = [];
  for (const client of clients) {
    const report = await client.next();
    if (report.type !== 'report') throw new Error(`a client answered ${report.type}`);
    reports.push(report);
  }
  await Promise.all(clients.map((c) => c.exit()));
  const delays = reports.flatMap((r) => r.delays).sort((a, b) => a - b);
  const events = reports.flatMap((r) => r.events);
  const spans = reports.flatMap((r) => r.spans);
  const perViewer = events.map((n, i) => (n < 2 ? 0 : ((n - 1) / spans[i]!) * 1000));
  // Every event any viewer got; a viewer skipped those between its first and last that it did not get.
  const spreads = new Map<number, [number, number]>();
  for (const [sequence, first, last] of reports.flatMap((r) => r.seen)) {
    const known = spreads.get(sequence);
    spreads.set(sequence, known === undefined ? [first, last] : [Math.min(known[0], first), Math.max(known[1], last)]);
  }
  const produced = [...spreads.keys()].sort((a, b) => a - b);
  const position = new Map(produced.map((sequence, i) => [sequence, i]));
  const firsts = reports.flatMap((r) => r.firstSequences);
  const lasts = reports.flatMap((r) => r.lastSequences);
  const skipped = events.reduce((sum, n, i) => sum + (n === 0 ? 0 : position.get(lasts[i]!)! - position.get(firsts[i]!)! + 1 - n), 0);
  // Closed streams leave the server's count: the next level must fit under STREAM_MAX_CONNECTIONS.
  await sleep(1_500);
  return {
    viewers: count,
    clients: clients.length,
    callsPerSecond: rate(calls),
    eventsPerViewerPerSecond: perViewer.reduce((a, b) => a + b, 0) / perViewer.length,
    skipped,
    getP99: percentile(requestTimes, 99),
    getMax: requestTimes.at(-1) ?? Number.NaN,
    firstViewer: percentile(
      [...spreads.values()].map(([first]) => first).sort((a, b) => a - b),
      50,
    ),
    lastViewer: percentile(
      [...spreads.values()].map(([, last]) => last).sort((a, b) => a - b),
      50,
    ),
    rss,
    cpuPercent,
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    max: delays.at(-1) ?? Number.NaN,
    clientElu: Math.max(...reports.map((r) => r.elu)),
    clientCpuPercent: reports.reduce((sum, r) => sum + r.cpuPercent, 0),
    othersCpuPercent: Math.max(0, machinePercent - cpuPercent - benchPercent - reports.reduce((sum, r) => sum + r.cpuPercent, 0)),
    load: loadavg()[0]!,
  };
}

export function serviceEnv(ibkr: IbkrSimulator, stateDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return benchServiceEnv(stateDir, { BROKER: 'ibkr', IBKR_GATEWAY_URL: ibkr.baseUrl, IBKR_TLS_VERIFY: 'false', ...extra });
}

/** A bench service in live mode against simulators, its limits off; `broker` names the broker and its settings. */
export function benchServiceEnv(stateDir: string, broker: Record<string, string>): Record<string, string> {
  return {
    DATA_MODE: 'live',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    STATE_DIR: stateDir,
    OVERVIEW_SOURCE: 'none',
    STREAM_MAX_PER_CLIENT: '0',
    // STREAM_MAX_CONNECTIONS keeps its default (10,000): the largest level fits it exactly.
    // This bench measures the polled topic; the streamed one is bench/broker-stream.ts's.
    BROKER_STREAMING: 'off',
    ...broker,
  };
}

const HEADER =
  " viewers | clients | calls/s | events/s/viewer | skipped | RSS MiB | RSS/connection | server CPU | delay p50 / p99 / max | first / last viewer | GET p99 / max | client ELU, CPU | others' CPU | load";

function row(f: Figures, base: Figures): string {
  const perConnection =
    f.viewers === base.viewers
      ? '             —'
      : `${((f.rss - base.rss) / (f.viewers - base.viewers) / 1024).toFixed(1).padStart(10)} KiB`;
  return [
    String(f.viewers).padStart(8),
    String(f.clients).padStart(7),
    f.callsPerSecond.toFixed(3).padStart(7),
    f.eventsPerViewerPerSecond.toFixed(3).padStart(15),
    String(f.skipped).padStart(7),
    (f.rss / 1048576).toFixed(1).padStart(7),
    perConnection,
    `${f.cpuPercent.toFixed(1).padStart(8)} %`,
    `${String(f.p50).padStart(4)} / ${String(f.p99).padStart(4)} / ${String(f.max).padStart(4)} ms`.padStart(21),
    `${String(f.firstViewer).padStart(4)} / ${String(f.lastViewer).padStart(4)} ms`.padStart(19),
    `${String(f.getP99).padStart(4)} / ${String(f.getMax).padStart(4)} ms`.padStart(13),
    `${f.clientElu.toFixed(2)}, ${f.clientCpuPercent.toFixed(0).padStart(3)} %`.padStart(15),
    `${f.othersCpuPercent.toFixed(0).padStart(9)} %`,
    f.load.toFixed(2),
  ].join(' | ');
}

const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

export default async function streamBench(): Promise<void> {
  const { soft, hard } = openFileLimits();
  if (hard < neededFiles()) {
    throw new Error(
      `open files: hard limit ${hard}, ${neededFiles()} needed for ${Math.max(...LEVELS)} streams; raise it (as root: ulimit -Hn ${neededFiles()}; docker run --ulimit nofile=${neededFiles()})`,
    );
  }
  console.log(`\nstream fan-out: ${SYMBOLS.length} broker symbols, ${SECONDS} s per level, one service process (node ${process.version})`);
  console.log(
    `viewers in client processes of up to ${VIEWERS_PER_CLIENT}; open files ${soft} (hard limit ${hard}); load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-stream-'));
  const ibkr = await createIbkrSimulator();
  await ibkr.listen();
  const service = await startService(serviceEnv(ibkr, join(stateDir, 'single')));
  try {
    const results: Figures[] = [];
    for (const level of LEVELS) results.push(await measure(ibkr, [service], level));
    const base = results[0]!;
    console.log(HEADER);
    for (const f of results) console.log(row(f, base));
    console.log(
      "(events/s/viewer: each viewer's events over the time between the upstream answers of its first and last; skipped: events viewers did not get between their first and last,",
    );
    console.log(" superseded by a newer one during a fan-out; delay: from the upstream answer to the event's bytes at a client;");
    console.log(' first / last viewer: the median over the events of the delay at the first viewer an event reached and at the last;');
    console.log(
      " GET: /api/system/live on the same process every 10 ms meanwhile; client ELU: the busiest client process's event-loop utilisation;",
    );
    console.log(
      ` others' CPU: what the rest of the machine (${cpus().length} cores) used meanwhile, % of one core; load: the 1-minute load average, this bench included)`,
    );
    const last = results.at(-1)!;
    console.log(`snapshot calls per second, ${last.viewers} viewers against 1: ${(last.callsPerSecond / base.callsPerSecond).toFixed(2)}×`);
    const cadence = results.every(
      (f) =>
        Math.abs(f.eventsPerViewerPerSecond - TARGET_EVENTS) <= EVENTS_TOLERANCE &&
        Math.abs(f.callsPerSecond - TARGET_EVENTS) <= EVENTS_TOLERANCE,
    );
    console.log(
      `target: ${TARGET_EVENTS.toFixed(2)} calls and events a second per viewer at every level (±${EVENTS_TOLERANCE}): ${verdict(cadence)}`,
    );
    const top = results.find((f) => f.viewers === TARGET_AT);
    if (top !== undefined)
      console.log(`target: delay p99 ≤ ${TARGET_P99_MS} ms at ${TARGET_AT} viewers: ${top.p99} ms, ${verdict(top.p99 <= TARGET_P99_MS)}`);
    await service.stop();

    const prefix = `mdp-bench-stream:${randomBytes(4).toString('hex')}:`;
    const replicas = await Promise.all(
      [0, 1, 2].map((i) => startService(serviceEnv(ibkr, join(stateDir, `r${i}`), { REDIS_URL, REDIS_KEY_PREFIX: prefix }))),
    );
    try {
      const spread = await measure(ibkr, replicas, REPLICA_VIEWERS);
      console.log(
        `3 replicas on one Redis, ${REPLICA_VIEWERS} viewers spread over them: ${spread.callsPerSecond.toFixed(3)} snapshot calls/s (one viewer on one service: ${base.callsPerSecond.toFixed(3)}), ${spread.eventsPerViewerPerSecond.toFixed(3)} events/s/viewer, delay p50 / p99 ${spread.p50} / ${spread.p99} ms`,
      );
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  } finally {
    await service.stop();
    await ibkr.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

if (process.argv.includes('--viewers')) await runClient();
else if (import.meta.url === `file://${process.argv[1]}`) await streamBench();
