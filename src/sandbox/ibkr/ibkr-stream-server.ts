// The simulated gateway's websocket (/v1/api/ws, on the simulator's own TLS port), with the manners of the
// recorded one (test/fixtures/recorded/ibkr/ws-*): an upgrade with the /tickle cookie is authorised at once,
// one without it hears "waiting for session" until it sends {"session":"…"}; then the greeting, the
// accounts and the full status; a heartbeat every 10 s; four replies to each "tic". A subscription
// (`smd+<conid>+{"fields":[…]}`) first sends every field asked for, twice (the second time with the keys
// in another order), for some contracts after a first frame with no market field at all; then, on every
// tick while the contract trades, only the fields whose values changed, now and then preceded by an empty
// frame without a conid. Nothing is sent outside the sessions. A subscription stops after ten minutes
// unless it is requested again, while the heartbeat goes on. Without a brokerage session the socket is
// closed with code 1000 as soon as it opens; a session lost under an open socket is announced by status
// frames of one key each, and its market data stops.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { unit } from '../price-model.js';
import { contractByConid, type SimContract } from './ibkr-contracts.js';
import { gatewayFields, type IbkrMarket } from './ibkr-market.js';

type GatewaySessionState = 'logged_out' | 'no_session' | 'connected';

/** What the socket needs of the rest of the gateway. */
export interface StreamGateway {
  readonly session: GatewaySessionState;
  /** The session value POST /tickle answers, and the socket accepts as {"session":"…"}. */
  readonly sessionId: string;
  /** The `x-sess-uuid` cookie POST /tickle sets. */
  readonly sessionCookie: string;
  readonly market: IbkrMarket;
  now(): number;
  /** The `act` frame's args: the accounts, as GET /iserver/accounts answers them. */
  accountsArgs(): Record<string, unknown>;
}

export interface IbkrStreamOptions {
  /** The server's heartbeat period (the gateway's: 10 s). */
  heartbeatMs?: number;
  /** How long a subscription lasts unless requested again (IBKR's changelog: 10 minutes). */
  subscriptionTtlMs?: number;
  /** How often the ticks due are looked for and sent. */
  tickLoopMs?: number;
}

/** What can go wrong on the socket, switched on by tests and benchmarks. */
export interface StreamFaults {
  /** Upgrades are answered 503 (a proxy or the gateway refusing the socket). */
  refuseUpgrade: boolean;
  /** Every session value and cookie is refused (status frames of `authenticated: false`). */
  refuseSession: boolean;
  /** Open sockets stay open and send nothing at all, heartbeat included. */
  silent: boolean;
}

const STREAM_PATH = '/v1/api/ws';
const SERVICE_IDS =
  '&serviceID1=122&serviceID2=123&serviceID3=203&serviceID4=775&serviceID5=204&serviceID6=206&serviceID7=108&serviceID8=109';
const USER = 'sandbox-user';

interface Subscription {
  contract: SimContract | undefined;
  fields: readonly string[];
  /** When it was last requested: it expires subscriptionTtlMs later. */
  requestedAt: number;
  /** The values last sent, by field code. */
  sent: Record<string, string>;
  lastTick: number;
  frames: number;
}

class StreamSocket {
  authorised = false;
  /** The connection went dead: nothing more is sent on it, heartbeat included. */
  silent = false;
  readonly subscriptions = new Map<number, Subscription>();
  readonly heartbeat: NodeJS.Timeout;

  constructor(
    readonly ws: WebSocket,
    heartbeatMs: number,
    beat: () => void,
  ) {
    this.heartbeat = setInterval(beat, heartbeatMs);
  }
}

export class IbkrStreamServer {
  readonly faults: StreamFaults = { refuseUpgrade: false, refuseSession: false, silent: false };
  /** Upgrades accepted since start, and the sockets open now: benchmarks count upstream connections with them. */
  accepted = 0;
  /** `smd` requests received, re-subscriptions included. */
  subscribeRequests = 0;
  /** Market data frames sent. */
  framesSent = 0;
  /** `tic` messages received. */
  ticsReceived = 0;
  private readonly sockets = new Set<StreamSocket>();
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly ticker: NodeJS.Timeout;
  private readonly heartbeatMs: number;
  private readonly ttlMs: number;

  constructor(
    private readonly gateway: StreamGateway,
    options: IbkrStreamOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 10_000;
    this.ttlMs = options.subscriptionTtlMs ?? 600_000;
    this.ticker = setInterval(() => this.tick(), options.tickLoopMs ?? 20);
    this.ticker.unref();
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  /** The conids subscribed on open sockets (expired ones included). */
  *subscriptions(): Iterable<number> {
    for (const s of this.sockets) yield* s.subscriptions.keys();
  }

  /** The server's 'upgrade' listener: the socket path only, refused without a login. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = new URL(req.url ?? '/', 'https://gateway.local').pathname;
    if (path !== STREAM_PATH) return refuse(socket, 404, 'Not Found');
    if (this.faults.refuseUpgrade) return refuse(socket, 503, 'Service Unavailable');
    if (this.gateway.session === 'logged_out') return refuse(socket, 401, 'Unauthorized');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.open(ws, req));
  }

  /** Every socket ends at once, as when the gateway or the network drops it. */
  dropAll(): void {
    for (const s of this.sockets) s.ws.terminate();
  }

  /** The sockets open now go dead without closing (a half-open connection); new ones are served. */
  silenceOpenSockets(): void {
    for (const s of this.sockets) s.silent = true;
  }

  /** Every subscription has expired: market data stops, the heartbeat goes on. */
  expireSubscriptions(): void {
    for (const s of this.sockets) for (const sub of s.subscriptions.values()) sub.requestedAt = -Infinity;
  }

  /** The brokerage session was lost: status frames of one key each, and no more market data. */
  sessionLost(): void {
    for (const s of this.sockets) {
      if (!s.authorised) continue;
      s.authorised = false;
      s.subscriptions.clear();
      for (const args of [{ authenticated: false }, { competing: false }, { message: '' }]) this.send(s, { topic: 'sts', args });
    }
  }

  close(): void {
    clearInterval(this.ticker);
    for (const s of this.sockets) {
      clearInterval(s.heartbeat);
      s.ws.terminate();
    }
    this.sockets.clear();
    this.wss.close();
  }

  private open(ws: WebSocket, req: IncomingMessage): void {
    this.accepted += 1;
    // No brokerage session (or the nightly maintenance): the gateway closes at once, with a normal code.
    if (this.gateway.session !== 'connected') return ws.close(1000);
    const s = new StreamSocket(ws, this.heartbeatMs, () => this.send(s, { topic: 'system', hb: this.gateway.now() }));
    this.sockets.add(s);
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(s, data.toString());
    });
    ws.on('close', () => {
      clearInterval(s.heartbeat);
      this.sockets.delete(s);
    });
    ws.on('error', () => {});
    if (cookieOf(req.headers.cookie, 'x-sess-uuid') === this.gateway.sessionCookie && !this.faults.refuseSession) this.authorise(s);
    else this.send(s, { message: 'waiting for session' });
  }

  private authorise(s: StreamSocket): void {
    s.authorised = true;
    this.send(s, { topic: 'system', success: USER, isFT: false, isPaper: true });
    this.send(s, { topic: 'act', args: this.gateway.accountsArgs() });
    this.send(s, {
      topic: 'sts',
      args: {
        connected: true,
        authenticated: true,
        established: true,
        competing: false,
        message: '',
        fail: '',
        serverName: 'JifN13002',
        serverVersion: 'Build 10.44.1d, Mar 3, 2026 1:55:32 PM',
        username: USER,
      },
    });
  }

  private receive(s: StreamSocket, text: string): void {
    if (text === 'tic') {
      this.ticsReceived += 1;
      const reply = { topic: 'tic', alive: true, id: this.gateway.sessionId, lastAccessed: this.gateway.now() };
      // As recorded: four identical replies to one tic.
      for (let i = 0; i < 4; i += 1) this.send(s, reply);
      return;
    }
    if (text.startsWith('{')) return this.session(s, text);
    const command = /^([su]md)\+(\d+)\+(.*)$/s.exec(text);
    if (command === null || !s.authorised) return;
    const conid = Number(command[2]);
    if (command[1] === 'umd') {
      s.subscriptions.delete(conid);
      return;
    }
    this.subscribeRequests += 1;
    let fields: string[] = [];
    try {
      const asked = (JSON.parse(command[3] as string) as { fields?: unknown }).fields;
      if (Array.isArray(asked)) fields = asked.map(String);
    } catch {
      // A subscription without readable arguments gets the default fields.
    }
    const sub: Subscription = {
      contract: contractByConid(conid),
      fields: fields.length > 0 ? fields : ['31', '84', '86'],
      requestedAt: this.gateway.now(),
      sent: {},
      lastTick: Number.NaN,
      frames: 0,
    };
    s.subscriptions.set(conid, sub);
    this.first(s, conid, sub);
  }

  private session(s: StreamSocket, text: string): void {
    let value: unknown;
    try {
      value = (JSON.parse(text) as { session?: unknown }).session;
    } catch {
      return;
    }
    if (s.authorised || value === undefined) return;
    if (value === this.gateway.sessionId && !this.faults.refuseSession && this.gateway.session === 'connected') return this.authorise(s);
    for (const args of [{ authenticated: false }, { competing: false }, { message: '' }]) this.send(s, { topic: 'sts', args });
  }

  /** The first frame(s) of a subscription: every field asked for, twice; some contracts send a bare frame before. */
  private first(s: StreamSocket, conid: number, sub: Subscription): void {
    const now = this.gateway.now();
    const contract = sub.contract;
    if (contract === undefined) {
      // A conid the gateway has no instrument for, as recorded: "55" a dash, the last price "N/A".
      const frame = {
        '55': '-',
        conidEx: String(conid),
        topic: `smd+${conid}`,
        conid,
        _updated: now,
        '6119': 'q0',
        server_id: 'q0',
        '31': 'N/A',
      };
      this.send(s, frame);
      return;
    }
    const server = `q${contract.conid % 33}`;
    const values = this.values(contract, sub.fields, now);
    // The availability comes with the first frames whether asked for or not (as in the 2021 capture).
    const availability = gatewayFields(this.gateway.market, contract, now)['6509'] as string;
    // As recorded for V: "RPB" on a real-time subscription's bare first frame (an uppercase P, where snapshots write "RpB").
    if (sendsBareFirstFrame(contract))
      this.send(s, { '6509': availability === 'RpB' ? 'RPB' : availability, ...envelope(conid, server, now) });
    const head = envelope(conid, server, now);
    // Some contracts' sizes and volume come only with their next trades and quotes (the recorded first
    // frames hold just what was asked and known), so a stream can lack fields a snapshot has.
    if (firstFrameOmitsSizes(contract)) for (const code of ['85', '87', '87_raw', '88']) delete values[code];
    this.send(s, { '6509': availability, ...head, ...values });
    this.send(s, { ...head, ...values, '6509': availability });
    this.framesSent += 2;
    sub.sent = values;
    sub.lastTick = this.gateway.market.quote(contract, this.gateway.market.seenAt(now)).tick;
  }

  /** Every subscription whose contract ticked since its last frame gets the fields that changed. */
  private tick(): void {
    if (this.faults.silent || this.sockets.size === 0) return;
    const now = this.gateway.now();
    const { market } = this.gateway;
    for (const s of this.sockets) {
      if (!s.authorised) continue;
      for (const [conid, sub] of s.subscriptions) {
        const contract = sub.contract;
        const seen = market.seenAt(now);
        if (contract === undefined || now - sub.requestedAt > this.ttlMs || !market.trades(contract, seen)) continue;
        const { tick } = market.quote(contract, seen);
        if (tick === sub.lastTick) continue;
        sub.lastTick = tick;
        const values = this.values(contract, sub.fields, now);
        const changed: Record<string, string | number> = {};
        for (const [code, value] of Object.entries(values)) if (sub.sent[code] !== value && code !== '87_raw') changed[code] = value;
        if (changed['87'] !== undefined && values['87_raw'] !== undefined) changed['87_raw'] = values['87_raw'];
        sub.sent = values;
        if (Object.keys(changed).length === 0) continue;
        sub.frames += 1;
        const server = `q${contract.conid % 33}`;
        // Now and then an empty update that names no conid (ibind skips them).
        if (sub.frames % 40 === 0) this.send(s, { server_id: server, _updated: now, '6119': server, topic: `smd+${conid}` });
        // And now and then the market data service ids, never asked for (as recorded).
        if (sub.frames % 10 === 1) changed['6508'] = SERVICE_IDS;
        this.send(s, { ...envelope(conid, server, now), ...changed });
        this.framesSent += 1;
      }
    }
  }

  /** The asked-for fields of a contract now: the snapshot's values, the change percent as a number, the volume also raw. */
  private values(contract: SimContract, fields: readonly string[], now: number): Record<string, string> {
    const all = gatewayFields(this.gateway.market, contract, now);
    const out: Record<string, string> = {};
    for (const code of fields) if (all[code] !== undefined) out[code] = all[code] as string;
    if (out['87'] !== undefined) out['87_raw'] = all['87_raw'] as string;
    return out;
  }

  private send(s: StreamSocket, message: Record<string, unknown>): void {
    if (this.faults.silent || s.silent || s.ws.readyState !== s.ws.OPEN) return;
    s.ws.send(JSON.stringify(withWireTypes(message)));
  }
}

/** One contract in five opens its subscription with a frame that has no market field (as recorded for V). @internal */
export function sendsBareFirstFrame(contract: SimContract): boolean {
  return unit(`bare:${contract.priceSymbol}`) < 0.2;
}

/** One contract in four (of those with a full first frame) leaves its sizes and volume to later ticks. @internal */
export function firstFrameOmitsSizes(contract: SimContract): boolean {
  return !sendsBareFirstFrame(contract) && unit(`partial:${contract.priceSymbol}`) < 0.25;
}

function envelope(conid: number, server: string, now: number): Record<string, string | number> {
  return { server_id: server, conidEx: String(conid), conid, _updated: now, '6119': server, topic: `smd+${conid}` };
}

/** The recorded frames' typing: "83" a JSON number, "87_raw" a number beside the "12.2M" of "87". */
function withWireTypes(message: Record<string, unknown>): Record<string, unknown> {
  if (typeof message.topic !== 'string' || !message.topic.startsWith('smd+')) return message;
  const out = { ...message };
  for (const code of ['83', '87_raw']) if (typeof out[code] === 'string') out[code] = Number(out[code]);
  return out;
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
