// Stream fan-out: 1, 100, 1,000 and 5,000 concurrent /api/stream clients on the same 10 broker symbols,
// against one service process and a standalone IBKR simulator that counts snapshot calls. Per level:
// upstream snapshot calls per second (the same for 1 and 5,000 viewers: one poller), the server's RSS per
// connection (against the 1-client level), its CPU, and the delay from the upstream answer (the event id
// starts with the cache entry's time) to the event parsed at a client. Then three replicas on one Redis
// with 150 viewers spread over them: calls per second equal to one viewer's.
// Loopback only; bounded: BENCH_SECONDS (default 10) of measurement per level.
//   npm run bench:stream            (or as part of npm run bench)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { Redis } from 'ioredis';
import { createIbkrSimulator, type IbkrSimulator } from '../src/sandbox/ibkr/ibkr-simulator.js';
import { type Child, startService } from './processes.js';

const SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'GOOGL', 'META', 'TSLA', 'SPY', 'QQQ', 'IBM'];
const LEVELS = [1, 100, 1_000, 5_000];
const REPLICA_VIEWERS = 150;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SNAPSHOT = '/iserver/marketdata/snapshot';
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

/** One stream reader: counts events and records each one's delay since the upstream answer. */
class Viewer {
  events = 0;
  private res: IncomingMessage | undefined;

  constructor(private readonly delays: number[]) {}

  open(url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(`${url}/api/stream?brokerQuotes=${SYMBOLS.join(',')}`, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        this.res = res;
        res.setEncoding('utf8');
        const parser = createParser({
          onEvent: (event) => {
            if (event.event !== 'brokerQuotes') return;
            this.events += 1;
            const answeredAt = Number(event.id?.split('-')[0]);
            if (this.events > 1) this.delays.push(Date.now() - answeredAt);
            if (this.events === 1) resolve();
          },
        });
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('error', () => {});
      });
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.res?.destroy();
  }
}

async function openViewers(urls: string[], count: number, delays: number[]): Promise<Viewer[]> {
  const viewers: Viewer[] = [];
  // In batches, so the connect storm itself is not what is measured.
  for (let i = 0; i < count; i += 250) {
    const batch = Array.from({ length: Math.min(250, count - i) }, (_, j) => new Viewer(delays));
    await Promise.all(batch.map((v, j) => v.open(urls[(i + j) % urls.length]!)));
    viewers.push(...batch);
  }
  return viewers;
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D/g, '')) * 1024;
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Figures {
  viewers: number;
  callsPerSecond: number;
  rss: number;
  cpuPercent: number;
  p50: number;
  p99: number;
  eventsPerViewerPerSecond: number;
}

/** Opens `count` viewers spread over `services`, measures for SECONDS, closes them. */
async function measure(ibkr: IbkrSimulator, services: Child[], count: number): Promise<Figures> {
  const delays: number[] = [];
  const viewers = await openViewers(services.map((s) => s.url), count, delays);
  await sleep(1_500);
  delays.length = 0;
  const pid = services[0]!.process.pid!;
  const calls = ibkr.gatewayCount(SNAPSHOT);
  const cpu = cpuSeconds(pid);
  const events = viewers.reduce((n, v) => n + v.events, 0);
  const started = performance.now();
  await sleep(SECONDS * 1000);
  const seconds = (performance.now() - started) / 1000;
  const figures: Figures = {
    viewers: count,
    callsPerSecond: (ibkr.gatewayCount(SNAPSHOT) - calls) / seconds,
    rss: rssBytes(pid),
    cpuPercent: ((cpuSeconds(pid) - cpu) / seconds) * 100,
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    eventsPerViewerPerSecond: (viewers.reduce((n, v) => n + v.events, 0) - events) / count / seconds,
  };
  for (const viewer of viewers) viewer.close();
  await sleep(1_500);
  return figures;
}

function serviceEnv(ibkr: IbkrSimulator, stateDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATA_MODE: 'live',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    STATE_DIR: stateDir,
    BROKER: 'ibkr',
    IBKR_GATEWAY_URL: ibkr.baseUrl,
    IBKR_TLS_VERIFY: 'false',
    OVERVIEW_SOURCE: 'none',
    STREAM_MAX_PER_CLIENT: '0',
    STREAM_MAX_CONNECTIONS: '10000',
    ...extra,
  };
}

const row = (f: Figures, base: Figures) =>
  `${String(f.viewers).padStart(6)} | ${f.callsPerSecond.toFixed(2).padStart(8)} | ${(f.eventsPerViewerPerSecond).toFixed(2).padStart(9)} | ${(f.rss / 1048576).toFixed(1).padStart(7)} | ${f.viewers === base.viewers ? '      —' : `${((f.rss - base.rss) / (f.viewers - base.viewers) / 1024).toFixed(1).padStart(5)} KiB`} | ${f.cpuPercent.toFixed(1).padStart(5)} % | ${String(f.p50).padStart(4)} / ${String(f.p99).padStart(4)} ms`;

export default async function streamBench(): Promise<void> {
  console.log(`\nstream fan-out: ${SYMBOLS.length} broker symbols, ${SECONDS} s per level, one service process (node ${process.version})`);
  const stateDir = mkdtempSync(join(tmpdir(), 'mdp-bench-stream-'));
  const ibkr = await createIbkrSimulator();
  await ibkr.listen();
  const service = await startService(serviceEnv(ibkr, join(stateDir, 'single')));
  try {
    const results: Figures[] = [];
    for (const level of LEVELS) results.push(await measure(ibkr, [service], level));
    const base = results[0]!;
    console.log(' viewers | calls/s | events/s/viewer | RSS MiB | RSS per connection | server CPU | delay p50 / p99');
    for (const f of results) console.log(row(f, base));
    const last = results.at(-1)!;
    console.log(`snapshot calls per second, ${last.viewers} viewers against 1: ${(last.callsPerSecond / base.callsPerSecond).toFixed(2)}×`);
    await service.stop();

    const prefix = `mdp-bench-stream:${randomBytes(4).toString('hex')}:`;
    const replicas = await Promise.all([0, 1, 2].map((i) => startService(serviceEnv(ibkr, join(stateDir, `r${i}`), { REDIS_URL, REDIS_KEY_PREFIX: prefix }))));
    try {
      const spread = await measure(ibkr, replicas, REPLICA_VIEWERS);
      console.log(`3 replicas on one Redis, ${REPLICA_VIEWERS} viewers spread over them: ${spread.callsPerSecond.toFixed(2)} snapshot calls/s (one viewer on one service: ${base.callsPerSecond.toFixed(2)}), delay p50 / p99 ${spread.p50} / ${spread.p99} ms`);
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
}

if (import.meta.url === `file://${process.argv[1]}`) await streamBench();
