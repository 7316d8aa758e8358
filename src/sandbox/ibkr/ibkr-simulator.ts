// A simulated IBKR Client Portal Gateway on HTTPS with a self-signed certificate, under /v1/api. It keeps
// the session states a real gateway goes through (logged out: 401 everywhere; logged in without a
// brokerage session: /portfolio reads answer, /iserver ones are refused with a recorded wording, see
// ibkr-session-faults.ts; connected), answers the first snapshot of a conid without
// fields, sends values as strings with thousands separators and suffixes, and enforces the pacing
// exactly as the gateway documents it, at arrival: an 11th request within any 1000 ms is a 429 (and,
// optionally, a penalty box of 429s), /portfolio/accounts once per 5 s. Optional seeded jitter delays
// each request on its way in, so arrivals bunch up the way a real network bunches them. Bodies have the
// keys and types of recorded gateway answers (test/fixtures/recorded/ibkr/): no "established" in an auth
// status, four keys in one without a session, and a snapshot without `fields` answers the fields the
// conid was subscribed with.
import { randomBytes } from 'node:crypto';
import { previousClose, priceAt, round, unit } from '../price-model.js';
import { type SimRequest, type SimResponse, SimulatedUpstream } from '../simulated-upstream.js';
import { contractByConid, secdefListings } from './ibkr-contracts.js';
import { accountBody, DEFAULT_ACCOUNTS, positionBody, type SimAccount } from './ibkr-portfolio.js';
import {
  DEFAULT_SESSION_FAULTS,
  type IbkrSessionFaults,
  readSessionFaults,
  refusalAnswer,
  SESSION_REFUSALS,
} from './ibkr-session-faults.js';
import { selfSignedCertificate } from './self-signed.js';

export const SESSION_STATES = ['logged_out', 'no_session', 'connected'] as const;
export type IbkrSessionState = (typeof SESSION_STATES)[number];

export interface IbkrSimulatorOptions {
  session?: IbkrSessionState;
  accounts?: readonly SimAccount[];
  /** Enforce the gateway's pacing with 429 (default true). */
  pacing?: boolean;
  /** After a pacing violation, answer everything with 429 for this long (IBKR: 10 minutes; default 0). */
  penaltyMs?: number;
  /** Each request reaches the gateway after a delay drawn uniformly from [0, jitterMs) (default 0). */
  jitterMs?: number;
  /** Seed of the jitter's random sequence, so a test sees the same delays on every run. */
  seed?: number;
  now?: () => number;
  host?: string;
  port?: number;
}

export const IBKR_BASE_PATH = '/v1/api';
const PAGE_SIZE = 100;
/**
 * Public clients' code names this answer (HTTP 500 on /iserver) for a call made before the session's account
 * list was read; no issue quotes a body, so the wording is theirs and the JSON shape the gateway's usual one.
 */
const ACCOUNTS_FIRST = 'Please query /accounts first';
const SANDBOX_CONTROL = '/__sandbox/ibkr';
const LOGGED_OUT: SimResponse = { status: 401, body: '' };
const MAC_ADDRESS = '06:05:9B:DE:2D:8B';
const SERVER_INFO = { serverName: 'JifN13002', serverVersion: 'Build 10.44.1d, Mar 3, 2026 1:55:32 PM' };
/** What a snapshot subscribed without `fields` carries. */
const DEFAULT_FIELDS = ['31', '84', '86'];
/** Market data availability (6509): in every populated row, asked for or not, as recorded. */
const FIELD_AVAILABILITY = '6509';
/** The gateway's rule: at most 10 requests in any rolling 1000 ms, counted at arrival. */
const PACING_PER_WINDOW = 10;
const PACING_WINDOW_MS = 1_000;

export class IbkrSimulator extends SimulatedUpstream {
  session: IbkrSessionState;
  accounts: SimAccount[];
  pacing: boolean;
  /** Symbols whose snapshots never fill (the account lacks their market data subscription). */
  readonly withoutMarketData = new Set<string>();
  /** How a missing brokerage session shows, and whether it can be started (ibkr-session-faults.ts). */
  sessionFaults: IbkrSessionFaults = { ...DEFAULT_SESSION_FAULTS };
  private readonly now: () => number;
  /** Subscribed conids, each with the fields it was first asked for. */
  private subscribed = new Map<number, string[]>();
  private brokerageAccountsRead = false;
  private portfolioAccountsRead = false;
  private lastPortfolioAccountsAt = -Infinity;
  /** The most requests that arrived within one rolling second, refused ones included: what the gateway saw at its worst. */
  peakPerSecond = 0;
  /** Requests refused for pacing (the penalty box and /portfolio/accounts included). */
  paceRefusals = 0;
  private arrivals: number[] = [];
  private accepted: number[] = [];
  private penaltyUntil = -Infinity;
  private readonly penaltyMs: number;
  private readonly jitterMs: number;
  private readonly random: () => number;
  private readonly sessionId = randomBytes(16).toString('hex');

  constructor(options: IbkrSimulatorOptions & { tls: { key: string; cert: string } }) {
    super({
      name: 'ibkr',
      tls: options.tls,
      host: options.host,
      port: options.port,
      handler: (req) => (this as IbkrSimulator).arrive(req),
    });
    this.penaltyMs = options.penaltyMs ?? 0;
    this.jitterMs = options.jitterMs ?? 0;
    this.random = seededRandom(options.seed ?? 1);
    this.session = options.session ?? 'connected';
    this.accounts = (options.accounts ?? DEFAULT_ACCOUNTS).map((a) => ({ ...a }));
    this.pacing = options.pacing ?? true;
    this.now = options.now ?? Date.now;
  }

  get baseUrl(): string {
    return `${this.origin}${IBKR_BASE_PATH}`;
  }

  /** Moves the gateway to a session state; a new or lost session forgets its subscriptions. */
  setSession(state: IbkrSessionState): void {
    if (state !== 'connected' || this.session !== 'connected') this.resetBrokerageSession();
    this.session = state;
  }

  /** The brokerage session drops without telling anyone (nightly reset, competing login). */
  loseSessionSilently(): void {
    this.setSession('no_session');
  }

  /** A new brokerage session replaced the old one unasked (the gateway re-authenticated after a reset): nothing read or subscribed in it yet. */
  replaceSessionSilently(): void {
    this.resetBrokerageSession();
  }

  setSessionFaults(faults: Partial<IbkrSessionFaults>): void {
    this.sessionFaults = { ...this.sessionFaults, ...faults };
  }

  setPositionCount(accountId: string, positions: number): void {
    const account = this.accounts.find((a) => a.id === accountId);
    if (account === undefined) throw new Error(`no simulated account ${accountId}`);
    account.positions = positions;
  }

  /** Requests counted under the gateway's path (without /v1/api). */
  gatewayCount(path: string): number {
    return this.count(`${IBKR_BASE_PATH}${path}`);
  }

  private resetBrokerageSession(): void {
    this.subscribed = new Map();
    this.brokerageAccountsRead = false;
    this.portfolioAccountsRead = false;
  }

  private async arrive(req: SimRequest): Promise<SimResponse> {
    if (this.jitterMs > 0) await new Promise((resolve) => setTimeout(resolve, this.random() * this.jitterMs));
    return this.answer(req);
  }

  answer(req: SimRequest): SimResponse {
    if (!req.url.pathname.startsWith(`${IBKR_BASE_PATH}/`)) return { status: 404, body: { error: 'not found' } };
    const path = req.url.pathname.slice(IBKR_BASE_PATH.length);
    if (this.overPace()) return { status: 429, body: { error: 'Too many requests' } };
    if (req.method === 'POST' && req.rawBody === '')
      return { status: 411, body: '<html><body><h1>411 Length Required</h1></body></html>', headers: { 'content-type': 'text/html' } };
    if (this.session === 'logged_out') return LOGGED_OUT;

    if (path === '/iserver/auth/status') return { status: 200, body: this.authStatus() };
    if (path === '/tickle' && req.method === 'POST') return { status: 200, body: this.tickle() };
    if (path === '/iserver/auth/ssodh/init' && req.method === 'POST') {
      if (!this.sessionFaults.unrecoverable) this.setSession('connected');
      return { status: 200, body: { ...this.authStatus(), passed: this.session === 'connected' } };
    }
    if (path === '/iserver/reauthenticate' && req.method === 'POST') {
      if (!this.sessionFaults.unrecoverable) this.setSession('connected');
      return { status: 200, body: { message: 'triggered' } };
    }
    if (path === '/logout' && req.method === 'POST') {
      this.setSession('logged_out');
      return { status: 200, body: { status: true } };
    }
    // The login alone reads the portfolio (IBKR's tutorial "Web API - Connect to Brokerage Session");
    // market data and the contract search need the brokerage session.
    if (this.session === 'no_session' && !path.startsWith('/portfolio/')) return refusalAnswer(this.sessionFaults);
    if (path === '/iserver/accounts') return this.brokerageAccounts();
    if (path === '/iserver/secdef/search') return this.search(req);
    if (path === '/iserver/marketdata/snapshot') return this.snapshot(req);
    if (path === '/portfolio/accounts') return this.portfolioAccounts();
    const positions = /^\/portfolio\/([^/]+)\/positions\/(\d+)$/.exec(path);
    if (positions !== null) return this.positions(decodeURIComponent(positions[1] as string), Number(positions[2]));
    return { status: 404, body: { error: `no route ${path}`, statusCode: 404 } };
  }

  /** GET: the session and its faults; POST: set them (`session` and ibkr-session-faults.ts's switches); DELETE: connected, no faults. */
  protected override extraControl(method: string, path: string, body: unknown): SimResponse | undefined {
    if (path !== SANDBOX_CONTROL) return undefined;
    if (method === 'DELETE') {
      this.sessionFaults = { ...DEFAULT_SESSION_FAULTS };
      this.setSession('connected');
    } else if (method === 'POST') {
      const faults = readSessionFaults(body);
      const session = (body as { session?: unknown } | undefined)?.session;
      if (typeof faults === 'string') return { status: 400, body: { error: faults } };
      if (session !== undefined && !SESSION_STATES.includes(session as IbkrSessionState))
        return { status: 400, body: { error: `session must be one of ${SESSION_STATES.join(', ')}` } };
      this.setSessionFaults(faults);
      if (session !== undefined) this.setSession(session as IbkrSessionState);
    } else if (method !== 'GET') return { status: 405, body: { error: 'GET, POST or DELETE' } };
    return { status: 200, body: { session: this.session, ...this.sessionFaults, refusals: Object.keys(SESSION_REFUSALS) } };
  }

  private overPace(): boolean {
    const now = this.now();
    // The busiest second always ends at an arrival: counting at each one finds it.
    this.arrivals = this.arrivals.filter((at) => at > now - PACING_WINDOW_MS);
    this.arrivals.push(now);
    this.peakPerSecond = Math.max(this.peakPerSecond, this.arrivals.length);
    if (!this.pacing) return false;
    this.accepted = this.accepted.filter((at) => at > now - PACING_WINDOW_MS);
    if (now < this.penaltyUntil || this.accepted.length >= PACING_PER_WINDOW) {
      this.paceRefusals += 1;
      if (now >= this.penaltyUntil) this.penaltyUntil = now + this.penaltyMs;
      return true;
    }
    this.accepted.push(now);
    return false;
  }

  /** As captured in 2023: no "established"; without a brokerage session only four keys, not connected. */
  private authStatus(): Record<string, unknown> {
    const claimed = this.session === 'no_session' && this.sessionFaults.statusClaimsSession;
    if (this.session !== 'connected' && !claimed) return { authenticated: false, competing: false, connected: false, MAC: MAC_ADDRESS };
    return {
      MAC: MAC_ADDRESS,
      authenticated: true,
      competing: false,
      connected: true,
      fail: '',
      hardware_info: `3e1f6a2b|${MAC_ADDRESS}`,
      message: '',
      serverInfo: SERVER_INFO,
    };
  }

  private tickle(): Record<string, unknown> {
    // The recorded tickle's authStatus is the auth status without its "fail".
    const { fail: _, ...authStatus } = this.authStatus();
    return {
      collission: false,
      hmds: { error: 'no bridge' },
      iserver: { authStatus },
      session: this.sessionId,
      ssoExpires: 460_311,
      userId: 123_456_789,
    };
  }

  private brokerageAccounts(): SimResponse {
    this.brokerageAccountsRead = true;
    const ids = this.accounts.map((a) => a.id);
    return {
      status: 200,
      body: {
        accounts: ids,
        acctProps: Object.fromEntries(ids.map((id) => [id, { hasChildAccounts: false, supportsCashQty: true, supportsFractions: true }])),
        aliases: Object.fromEntries(this.accounts.map((a) => [a.id, a.id])),
        allowFeatures: { showGFIS: true, allowCrypto: false, allowTypeAhead: true },
        chartPeriods: { STK: ['*'] },
        groups: [],
        profiles: [],
        selectedAccount: ids[0] ?? '',
        serverInfo: SERVER_INFO,
        sessionId: this.sessionId.slice(0, 8),
        isFT: false,
        isPaper: true,
      },
    };
  }

  private search(req: SimRequest): SimResponse {
    const body = req.body as { symbol?: unknown } | undefined;
    const symbol = req.url.searchParams.get('symbol') ?? (typeof body?.symbol === 'string' ? body.symbol : '');
    if (symbol.trim() === '') return { status: 400, body: { error: 'Missing symbol', statusCode: 400 } };
    const listings = secdefListings(symbol);
    return listings.length === 0 ? { status: 200, body: { error: 'No symbol found' } } : { status: 200, body: listings };
  }

  private snapshot(req: SimRequest): SimResponse {
    const conids = (req.url.searchParams.get('conids') ?? '')
      .split(',')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
    if (conids.length === 0) return { status: 400, body: { error: 'conids required', statusCode: 400 } };
    if (!this.brokerageAccountsRead) return { status: 500, body: { error: ACCOUNTS_FIRST } };
    const asked = req.url.searchParams.get('fields')?.split(',');
    return {
      status: 200,
      body: conids.map((conid) => {
        const row: Record<string, unknown> = { conid, conidEx: String(conid) };
        const contract = contractByConid(conid);
        const subscription = this.subscribed.get(conid);
        // No data on a conid's first call: that call only subscribes.
        if (contract === undefined || subscription === undefined || this.withoutMarketData.has(contract.priceSymbol)) {
          if (contract !== undefined && subscription === undefined) this.subscribed.set(conid, asked ?? DEFAULT_FIELDS);
          return row;
        }
        const values = quoteFields(contract.priceSymbol, contract.symbol, this.now());
        // Only fields asked for come back (a call without `fields` gets the subscription's), and the availability always.
        for (const field of [...(asked ?? subscription), FIELD_AVAILABILITY]) if (values[field] !== undefined) row[field] = values[field];
        row._updated = this.now();
        row['6119'] = 'q0';
        row.server_id = 'q0';
        return row;
      }),
    };
  }

  private portfolioAccounts(): SimResponse {
    const now = this.now();
    if (this.pacing && now - this.lastPortfolioAccountsAt < 5_000) {
      this.paceRefusals += 1;
      return { status: 429, body: { error: 'Too many requests' } };
    }
    this.lastPortfolioAccountsAt = now;
    this.portfolioAccountsRead = true;
    return { status: 200, body: this.accounts.map(accountBody) };
  }

  private positions(accountId: string, page: number): SimResponse {
    // The status public clients give for this on /portfolio is not known: 400, as the gateway's other refusals of a request.
    if (!this.portfolioAccountsRead) return { status: 400, body: { error: ACCOUNTS_FIRST, statusCode: 400 } };
    const account = this.accounts.find((a) => a.id === accountId);
    if (account === undefined) return { status: 400, body: { error: `Account ${accountId} not found`, statusCode: 400 } };
    const now = this.now();
    const rows = [];
    for (let i = page * PAGE_SIZE; i < Math.min(account.positions, (page + 1) * PAGE_SIZE); i += 1)
      rows.push(positionBody(account.id, i, now));
    return { status: 200, body: rows };
  }
}

/** Snapshot values the way the gateway writes them: strings, commas, "M"/"K" suffixes, a "C" prefix when closed. */
export function quoteFields(priceSymbol: string, symbol: string, now: number): Record<string, string> {
  const last = priceAt(priceSymbol, now);
  const prior = previousClose(priceSymbol, now);
  const spread = Math.max(0.01, round(last * 0.0002, 2));
  const change = last - prior;
  const volume = Math.round(
    200_000 + unit(`volume:${priceSymbol}`) * 60_000_000 * (0.5 + unit(`v:${priceSymbol}:${Math.floor(now / 60_000)}`)),
  );
  return {
    '31': `${marketOpen(now) ? '' : 'C'}${last.toFixed(2)}`,
    '55': symbol,
    '82': change.toFixed(2),
    '83': ((change / prior) * 100).toFixed(2),
    '84': (last - spread / 2).toFixed(2),
    '85': withCommas(100 * (1 + Math.floor(unit(`as:${priceSymbol}:${now}`) * 30))),
    '86': (last + spread / 2).toFixed(2),
    '87':
      volume >= 1_000_000 ? `${(volume / 1_000_000).toFixed(1)}M` : volume >= 1_000 ? `${(volume / 1_000).toFixed(1)}K` : String(volume),
    '88': withCommas(100 * (1 + Math.floor(unit(`bs:${priceSymbol}:${now}`) * 30))),
    '7059': String(100 * (1 + Math.floor(unit(`ls:${priceSymbol}:${now}`) * 5))),
    '7295': priceAt(priceSymbol, now - ((now % 86_400_000) - 14.5 * 3_600_000)).toFixed(2),
    '7741': prior.toFixed(2),
    '6509': 'RpB',
  };
}

function withCommas(n: number): string {
  return n.toLocaleString('en-US');
}

/** US equity hours (14:30-21:00 UTC on weekdays); outside them the last price is the close ("C" prefix). */
function marketOpen(now: number): boolean {
  const date = new Date(now);
  const day = date.getUTCDay();
  const minutes = date.getUTCHours() * 60 + date.getUTCMinutes();
  return day >= 1 && day <= 5 && minutes >= 870 && minutes < 1260;
}

/** mulberry32: a small seeded generator, so jittered runs repeat exactly. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export async function createIbkrSimulator(options: IbkrSimulatorOptions = {}): Promise<IbkrSimulator> {
  return new IbkrSimulator({ ...options, tls: await selfSignedCertificate() });
}
