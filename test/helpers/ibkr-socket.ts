// A websocket client of the simulated IBKR gateway for tests (it keeps every frame, and waits on them), and
// the symbols whose contracts tick most often there.
import type { TestContext } from 'node:test';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { contractBySymbol } from '../../src/sandbox/ibkr/ibkr-contracts.js';
import type { IbkrSimulator } from '../../src/sandbox/ibkr/ibkr-simulator.js';
import { UNIVERSE } from '../../src/sandbox/universe.js';

export type Frame = Record<string, unknown>;

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

/** The cookie POST /tickle sets, as a request header. */
export async function tickleCookie(sim: IbkrSimulator): Promise<string> {
  const res = await request(`${sim.baseUrl}/tickle`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
    dispatcher: insecure,
  });
  await res.body.dump();
  return String(res.headers['set-cookie']).split(';')[0] as string;
}

export class GatewaySocket {
  readonly frames: Frame[] = [];
  /** Resolves with the close code, or with the HTTP status of a refused upgrade. */
  readonly ended: Promise<{ code?: number; status?: number }>;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as Frame);
      for (const wake of this.waiters) wake();
    });
    this.ended = new Promise((resolve) => {
      ws.on('close', (code) => resolve({ code }));
      ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
      ws.on('error', () => {});
    });
  }

  static async open(t: TestContext, sim: IbkrSimulator, options: { cookie?: boolean } = {}): Promise<GatewaySocket> {
    const cookie = options.cookie === false ? undefined : await tickleCookie(sim);
    const ws = new WebSocket(`${sim.baseUrl.replace('https:', 'wss:')}/ws`, {
      rejectUnauthorized: false,
      headers: cookie === undefined ? {} : { cookie },
    });
    const socket = new GatewaySocket(ws);
    t.after(() => ws.terminate());
    await Promise.race([new Promise((resolve) => ws.once('open', resolve)), socket.ended]);
    return socket;
  }

  send(text: string): void {
    this.ws.send(text);
  }

  /** Frames since `from` (an index into `frames`) that match. */
  since(from: number, match: (f: Frame) => boolean): Frame[] {
    return this.frames.slice(from).filter(match);
  }

  /** Waits until `done` holds over the frames, or fails after `timeoutMs` saying what it waited for. */
  async until(done: (frames: Frame[]) => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    if (done(this.frames)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`${what}: not within ${timeoutMs} ms (${this.frames.length} frames)`));
      }, timeoutMs);
      const wake = () => {
        if (!done(this.frames)) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
  }
}

export const isMarketData = (f: Frame) => typeof f.topic === 'string' && f.topic.startsWith('smd+') && f.conid !== undefined;

/** The symbols the simulated gateway lists, those whose contracts tick most often first. */
export function busiestSymbols(sim: IbkrSimulator): string[] {
  const interval = new Map<string, number>();
  for (const { symbol } of UNIVERSE) {
    const contract = contractBySymbol(symbol);
    if (contract !== undefined) interval.set(symbol, sim.market.tickIntervalMs(contract));
  }
  return [...interval.keys()].sort((a, b) => (interval.get(a) as number) - (interval.get(b) as number));
}
