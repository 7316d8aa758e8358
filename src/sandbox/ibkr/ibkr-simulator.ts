// A simulated IBKR Client Portal Gateway on HTTPS with a self-signed certificate, under /v1/api. It keeps
// the session states a real gateway goes through (logged out: 401 everywhere, but for the auth status a
// POST /logout leaves, which answers as recorded; logged in without a brokerage session: /portfolio reads
// answer, /iserver ones are refused with a recorded wording, see ibkr-session-faults.ts; connected),
// answers the first snapshot of a conid without fields, sends values as strings with thousands separators
// and suffixes, market data as the account is entitled to it (real-time or delayed, the market open or
// closed: ibkr-market.ts; switched at /__sandbox/ibkr), and enforces the pacing
// exactly as the gateway documents it, at arrival: an 11th request within any 1000 ms is a 429 (and,
// optionally, a penalty box of 429s), /portfolio/accounts once per 5 s. Optional seeded jitter delays
// each request on its way in, so arrivals bunch up the way a real network bunches them. Bodies have the
// keys and types of recorded gateway answers (test/fixtures/recorded/ibkr/): no "established" in an auth
// status, four keys in one without a session, and a snapshot without `fields` answers the fields the
// conid was subscribed with. It also serves the Client Portal websocket (ibkr-stream-server.ts); snapshots
// and the socket read one simulated market (ibkr-market.ts).
import { randomBytes } from 'node:crypto';
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
import { gatewayFields, IbkrMarket, MARKET_DATA, type MarketData, type MarketSession, usSession } from './ibkr-market.js';
import { IbkrStreamServer, type IbkrStreamOptions } from './ibkr-stream-server.js';
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
  /** The market's sessions (default: US equity hours by `now`); tests and benchmarks hold it open or closed. */
  sessionAt?: (now: number) => MarketSession;
  /** The account's market data: realtime (a subscription, the default) or delayed (none, as a paper account by default). */
  marketData?: MarketData;
  /** The websocket's heartbeat, subscription lifetime and tick loop. */
  stream?: IbkrStreamOptions;
  host?: string;
  port?: number;
}

const IBKR_BASE_PATH = '/v1/api';
const PAGE_SIZE = 100;
/**
 * Public clients' code names this answer (HTTP 500 on /iserver) for a call made before the session's account
 * list was read; no issue quotes a body, so the wording is theirs and the JSON shape the gateway's usual one.
 */
const ACCOUNTS_FIRST = 'Please query /accounts first';
const SANDBOX_CONTROL = '/__sandbox/ibkr';
const LOGGED_OUT: SimResponse = { status: 401, body: '' };
/** The auth status after POST /logout, as recorded from build 10.45 (2026): every flag false, no MAC. */
const AFTER_LOGOUT = { authenticated: false, established: false, competing: false, connected: false, MAC: null };
const MAC_ADDRESS = '06:05:9B:DE:2D:8B';
const SERVER_INFO = { serverName: 'JifN13002', serverVersion: 'Build 10.44.1d, Mar 3, 2026 1:55:32 PM' };
const ALLOW_FEATURES = {
  showGFIS: true,
  showEUCostReport: false,
  allowEventContract: true,
  allowFXConv: true,
  allowFinancialLens: false,
  allowMTA: true,
  allowTypeAhead: true,
  allowEventTrading: true,
  snapshotRefreshTimeout: 30,
  liteUser: false,
  showWebNews: true,
  research: true,
  debugPnl: true,
  showTaxOpt: true,
  showImpactDashboard: true,
  allowDynAccount: false,
  allowCrypto: false,
  allowFA: false,
  allowLiteUnderPro: false,
  allowedAssetTypes: 'STK,CFD,OPT,FOP,WAR,FUT,BAG,PDC,CASH,IND,BOND,BILL,FUND,SLB,News,CMDTY,IOPT,ICU,ICS,PHYSS,CRYPTO',
  restrictTradeSubscription: false,
  showUkUserLabels: false,
  sideBySide: true,
};
const SHORT_PERIODS = ['2h', '1d', '2d', '1w', '1m'];
const CHART_PERIODS = Object.fromEntries(
  ['STK', 'CFD', 'OPT', 'FOP', 'WAR', 'IOPT', 'FUT', 'CASH', 'IND', 'BOND', 'FUND', 'CMDTY', 'PHYSS', 'CRYPTO'].map((type) => [
    type,
    type === 'OPT' || type === 'FOP' ? SHORT_PERIODS : ['*'],
  ]),
);
/** What a snapshot subscribed without `fields` carries. */
const DEFAULT_FIELDS = ['31', '84', '86'];
/** Market data availability (6509): in every populated row, asked for or not, as recorded. */
const FIELD_AVAILABILITY = '6509';
/** The market's hours as /__sandbox/ibkr switches them: US equity hours, or held open or closed. */
const MARKET_HOURS: Record<string, (now: number) => MarketSession> = {
  'us-hours': usSession,
  open: () => 'regular',
  closed: () => 'closed',
};
/** The gateway's rule: at most 10 requests in any rolling 1000 ms, counted at arrival. */
const PACING_PER_WINDOW = 10;
const PACING_WINDOW_MS = 1_000;

export class IbkrSimulator extends SimulatedUpstream {
  session: IbkrSessionState;
  /** Logged out by POST /logout (not never logged in): the auth status answers, as recorded, where all else is 401. */
  private loggedOutByLogout = false;
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
  /** The session value /tickle answers and the websocket accepts; the cookie /tickle sets. */
  sessionId = randomBytes(16).toString('hex');
  sessionCookie = randomBytes(16).toString('hex');
  readonly market: IbkrMarket;
  /** The websocket at /v1/api/ws: its faults, counters and subscriptions. */
  readonly stream: IbkrStreamServer;

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
    this.market = new IbkrMarket(options.sessionAt, options.marketData);
    const gateway = this;
    this.stream = new IbkrStreamServer(
      {
        get session() {
          return gateway.session;
        },
        get sessionId() {
          return gateway.sessionId;
        },
        get sessionCookie() {
          return gateway.sessionCookie;
        },
        market: this.market,
        now: () => this.now(),
        accountsArgs: () => this.accountsBody(),
      },
      options.stream,
    );
    this.server.on('upgrade', (req, socket, head) => this.stream.upgrade(req, socket, head));
  }

  override async close(): Promise<void> {
    this.stream.close();
    await super.close();
  }

  /**
   * /__sandbox/stream: GET its counters and faults; POST `{"refuseUpgrade"|"refuseSession"|"silent": bool}` to
   * switch a fault, or `{"action": "drop"|"silence"|"expire"|"lose-session"|"rotate-session"}` for a one-off.
   */
  private streamControl(method: string, body: unknown): SimResponse {
    const { stream } = this;
    if (method === 'POST') {
      const asked = (body ?? {}) as Record<string, unknown>;
      for (const key of ['refuseUpgrade', 'refuseSession', 'silent'] as const)
        if (typeof asked[key] === 'boolean') stream.faults[key] = asked[key] as boolean;
      const actions: Record<string, () => void> = {
        drop: () => stream.dropAll(),
        silence: () => stream.silenceOpenSockets(),
        expire: () => stream.expireSubscriptions(),
        'lose-session': () => this.loseSessionSilently(),
        'rotate-session': () => this.rotateSessionId(),
      };
      if (asked.action !== undefined) {
        const action = actions[String(asked.action)];
        if (action === undefined) return { status: 400, body: { error: `action must be one of ${Object.keys(actions).join(', ')}` } };
        action();
      }
    }
    const { accepted, openSockets, subscribeRequests, framesSent, ticsReceived } = stream;
    return { status: 200, body: { faults: stream.faults, accepted, openSockets, subscribeRequests, framesSent, ticsReceived } };
  }

  /** The session value and cookie change (the gateway restarted its session): an old one no longer opens the socket. */
  rotateSessionId(): void {
    this.sessionId = randomBytes(16).toString('hex');
    this.sessionCookie = randomBytes(16).toString('hex');
  }

  get baseUrl(): string {
    return `${this.origin}${IBKR_BASE_PATH}`;
  }

  /** Moves the gateway to a session state; a new or lost session forgets its subscriptions. */
  setSession(state: IbkrSessionState): void {
    if (state !== 'connected' || this.session !== 'connected') this.resetBrokerageSession();
    this.session = state;
    this.loggedOutByLogout = false;
    if (state !== 'connected') this.stream.sessionLost();
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
    if (this.session === 'logged_out')
      return this.loggedOutByLogout && path === '/iserver/auth/status' ? { status: 200, body: AFTER_LOGOUT } : LOGGED_OUT;

    if (path === '/iserver/auth/status') return { status: 200, body: this.authStatus() };
    if (path === '/tickle' && req.method === 'POST')
      return {
        status: 200,
        body: this.tickle(),
        headers: { 'set-cookie': `x-sess-uuid=${this.sessionCookie}; Path=/v1/api; Secure; HttpOnly` },
      };
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
      this.loggedOutByLogout = true;
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

  /**
   * GET: the session, its faults and the market; POST: set them (`session`, ibkr-session-faults.ts's switches,
   * `marketData`: realtime or delayed, `market`: us-hours, open or closed); DELETE: connected, no faults, US
   * hours with real-time data.
   */
  protected override extraControl(method: string, path: string, body: unknown): SimResponse | undefined {
    if (path === '/__sandbox/stream') return this.streamControl(method, body);
    if (path !== SANDBOX_CONTROL) return undefined;
    if (method === 'DELETE') {
      this.sessionFaults = { ...DEFAULT_SESSION_FAULTS };
      this.setSession('connected');
      this.market.marketData = 'realtime';
      this.market.sessionAt = usSession;
    } else if (method === 'POST') {
      const faults = readSessionFaults(body);
      const { session, marketData, market } = (body ?? {}) as { session?: unknown; marketData?: unknown; market?: unknown };
      if (typeof faults === 'string') return { status: 400, body: { error: faults } };
      if (session !== undefined && !SESSION_STATES.includes(session as IbkrSessionState))
        return { status: 400, body: { error: `session must be one of ${SESSION_STATES.join(', ')}` } };
      if (marketData !== undefined && !MARKET_DATA.includes(marketData as MarketData))
        return { status: 400, body: { error: `marketData must be one of ${MARKET_DATA.join(', ')}` } };
      if (market !== undefined && !(typeof market === 'string' && market in MARKET_HOURS))
        return { status: 400, body: { error: `market must be one of ${Object.keys(MARKET_HOURS).join(', ')}` } };
      this.setSessionFaults(faults);
      if (session !== undefined) this.setSession(session as IbkrSessionState);
      if (marketData !== undefined) this.market.marketData = marketData as MarketData;
      if (market !== undefined) this.market.sessionAt = MARKET_HOURS[market as string] as (now: number) => MarketSession;
    } else if (method !== 'GET') return { status: 405, body: { error: 'GET, POST or DELETE' } };
    return {
      status: 200,
      body: {
        session: this.session,
        ...this.sessionFaults,
        refusals: Object.keys(SESSION_REFUSALS),
        marketData: this.market.marketData,
        market: Object.entries(MARKET_HOURS).find(([, at]) => at === this.market.sessionAt)?.[0] ?? 'custom',
      },
    };
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
    return { status: 200, body: this.accountsBody() };
  }

  /** GET /iserver/accounts's body, which the websocket's `act` frame also carries (keys as recorded in 2026). */
  private accountsBody(): Record<string, unknown> {
    const ids = this.accounts.map((a) => a.id);
    const props = {
      hasChildAccounts: false,
      supportsCashQty: true,
      liteUnderPro: false,
      noFXConv: false,
      isProp: false,
      supportsFractions: true,
      allowCustomerTime: false,
      autoFx: false,
    };
    return {
      accounts: ids,
      acctProps: Object.fromEntries(ids.map((id) => [id, props])),
      aliases: Object.fromEntries(this.accounts.map((a) => [a.id, a.id])),
      allowFeatures: ALLOW_FEATURES,
      chartPeriods: CHART_PERIODS,
      groups: [],
      profiles: [],
      selectedAccount: ids[0] ?? '',
      serverInfo: SERVER_INFO,
      sessionId: `${this.sessionId.slice(0, 8)}.${this.sessionId.slice(8, 16)}`,
      isFT: false,
      isPaper: true,
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
        if (subscription === undefined) {
          this.subscribed.set(conid, asked ?? DEFAULT_FIELDS);
          return row;
        }
        // A conid the gateway has no instrument (or no market data permission) for, as recorded (SAP, 2026):
        // "55" a dash, asked for or not, and the last price "N/A".
        if (contract === undefined) return { '55': '-', ...row, _updated: this.now(), '6119': 'q0', server_id: 'q0', '31': 'N/A' };
        if (this.withoutMarketData.has(contract.priceSymbol)) return row;
        const values = gatewayFields(this.market, contract, this.now());
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
