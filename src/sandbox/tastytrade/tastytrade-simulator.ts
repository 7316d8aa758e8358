// A simulated Tastytrade Open API: OAuth2 refresh-token grant with access tokens that expire, the
// User-Agent requirement, the {data, context} envelope with kebab-case keys, and the real error bodies
// (invalid_grant, token_invalid, 401 / 429). Bodies have the keys and types of recorded answers
// (test/fixtures/recorded/tastytrade/): quantities, prices and sizes as decimal strings ("100", "2.0",
// "210.6"), a few values as numbers (multiplier, halt times), market data with "pagination": null and
// crypto without close or volume, equity positions without expires-at. GET /api-quote-tokens issues DXLink
// tokens for its DXLink websocket (dxlink-server.ts), whose faults are switched at /__sandbox/stream, at
// the token's level: `api` (real-time, the default) or `demo` (Tastytrade's sandbox environment: the
// /delayed address, delayed events), switched by the `level` option or at /__sandbox/tastytrade. REST
// market data and the feed read one market (tastytrade-market.ts).
import { randomBytes } from 'node:crypto';
import type { MarketSession } from '../ibkr/ibkr-market.js';
import { previousClose, priceAt, round, unit } from '../price-model.js';
import { type SimRequest, type SimResponse, SimulatedUpstream } from '../simulated-upstream.js';
import { findInstrument, UNIVERSE } from '../universe.js';
import { DXLINK_DELAYED_PATH, DXLINK_PATH, DxlinkServer, type DxlinkServerOptions } from './dxlink-server.js';
import { CRYPTO, INDICES, TastytradeMarket, type TastytradeQuote } from './tastytrade-market.js';

export interface TastytradeSimulatorOptions {
  clientSecret: string;
  refreshToken: string;
  /** Access token lifetime in seconds (900 like the real one). */
  tokenLifetimeSeconds?: number;
  now?: () => number;
  host?: string;
  port?: number;
  /** The US session at a moment (tests and benchmarks hold the market open or closed). */
  sessionAt?: (now: number) => MarketSession;
  /** The DXLink socket's timings and limits. */
  stream?: DxlinkServerOptions;
  /** The origin its quote tokens name for DXLink (the real one names dxFeed's host); by default its own, ws://. */
  dxlinkOrigin?: string;
  /** The quote tokens' level: api (real-time) or demo (delayed, as Tastytrade's sandbox environment answers). */
  level?: QuoteLevel;
}

const QUOTE_LEVELS = ['api', 'demo'] as const;
export type QuoteLevel = (typeof QUOTE_LEVELS)[number];

interface SimAccount {
  number: string;
  nickname: string;
  typeName: string;
  marginOrCash: 'Margin' | 'Cash';
  positions: number;
}

const ACCOUNTS: readonly SimAccount[] = [
  { number: '5WT00001', nickname: 'Individual', typeName: 'Individual', marginOrCash: 'Margin', positions: 9 },
  { number: '5WT00002', nickname: 'Roth IRA', typeName: 'Roth IRA', marginOrCash: 'Cash', positions: 4 },
];

const MAX_SYMBOLS = 100;

export class TastytradeSimulator extends SimulatedUpstream {
  tokenLifetimeSeconds: number;
  private readonly credentials: TastytradeSimulatorOptions;
  private readonly now: () => number;
  private tokens = new Map<string, number>();
  /** The access token issued last (tests check it never leaks). */
  lastToken: string | undefined;
  /** Answers given with 401, for tests proving a refresh happened ahead of expiry. */
  unauthorized = 0;
  readonly market: TastytradeMarket;
  /** The DXLink websocket: its faults, counters and subscriptions. */
  readonly stream: DxlinkServer;
  /** The level of the quote tokens issued from now on. */
  level: QuoteLevel;

  constructor(options: TastytradeSimulatorOptions) {
    super({ name: 'tastytrade', host: options.host, port: options.port, handler: (req) => (this as TastytradeSimulator).answer(req) });
    this.credentials = options;
    this.tokenLifetimeSeconds = options.tokenLifetimeSeconds ?? 900;
    this.now = options.now ?? Date.now;
    this.market = new TastytradeMarket(options.sessionAt);
    this.level = options.level ?? 'api';
    this.stream = new DxlinkServer(this.market, () => this.now(), options.stream);
    this.server.on('upgrade', (req, socket, head) => this.stream.upgrade(req, socket, head));
  }

  override async close(): Promise<void> {
    this.stream.close();
    await super.close();
  }

  /**
   * /__sandbox/stream: GET its counters and faults; POST `{"refuseUpgrade"|"refuseAuth"|"silent": bool}` to
   * switch a fault, or `{"action": "drop"|"silence"|"expire-tokens"}` for a one-off.
   */
  protected override extraControl(method: string, path: string, body: unknown): SimResponse | undefined {
    if (path === '/__sandbox/tastytrade') return this.levelControl(method, body);
    if (path !== '/__sandbox/stream') return undefined;
    const { stream } = this;
    if (method === 'POST') {
      const asked = (body ?? {}) as Record<string, unknown>;
      for (const key of ['refuseUpgrade', 'refuseAuth', 'silent'] as const)
        if (typeof asked[key] === 'boolean') stream.faults[key] = asked[key] as boolean;
      const actions: Record<string, () => void> = {
        drop: () => stream.dropAll(),
        silence: () => stream.silenceOpenSockets(),
        'expire-tokens': () => stream.expireTokens(),
      };
      if (asked.action !== undefined) {
        const action = actions[String(asked.action)];
        if (action === undefined) return { status: 400, body: { error: `action must be one of ${Object.keys(actions).join(', ')}` } };
        action();
      }
    }
    const { accepted, openSockets, authRefusals, timeouts, subscriptionMessages, keepalivesReceived, framesSent } = stream;
    return {
      status: 200,
      body: { faults: stream.faults, accepted, openSockets, authRefusals, timeouts, subscriptionMessages, keepalivesReceived, framesSent },
    };
  }

  /** /__sandbox/tastytrade: GET the quote tokens' level; POST `{"level": "api"|"demo"}` to switch it (tokens issued before keep theirs). */
  private levelControl(method: string, body: unknown): SimResponse {
    if (method === 'POST') {
      const level = (body as { level?: unknown } | undefined)?.level;
      if (!QUOTE_LEVELS.includes(level as QuoteLevel))
        return { status: 400, body: { error: `level must be one of ${QUOTE_LEVELS.join(', ')}` } };
      this.level = level as QuoteLevel;
    } else if (method !== 'GET') return { status: 405, body: { error: 'GET or POST' } };
    return { status: 200, body: { level: this.level } };
  }

  /** Every access token issued so far stops working, as if its 15 minutes had passed. */
  expireTokens(): void {
    for (const token of this.tokens.keys()) this.tokens.set(token, 0);
  }

  issuedTokens(): number {
    return this.tokens.size;
  }

  answer(req: SimRequest): SimResponse {
    const agent = req.headers['user-agent'];
    if (typeof agent !== 'string' || !/^[\w.-]+\/[\w.-]+/.test(agent))
      return this.deny('invalid_user_agent', 'A User-Agent of the form product/version is required');
    const path = req.url.pathname;
    if (path === '/oauth/token')
      return req.method === 'POST'
        ? this.token(req)
        : { status: 405, body: { error: { code: 'method_not_allowed', message: 'Use POST' } } };
    const auth = req.headers.authorization;
    const token = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt === undefined || expiresAt <= this.now()) return this.deny('token_invalid', 'This token is invalid or has expired');
    if (req.method !== 'GET') return { status: 405, body: { error: { code: 'method_not_allowed', message: 'Use GET' } } };
    if (path === '/customers/me/accounts') return envelope(path, { items: ACCOUNTS.map(accountItem) });
    const positions = /^\/accounts\/([^/]+)\/positions$/.exec(path);
    if (positions !== null)
      return this.positions(decodeURIComponent(positions[1] as string), req.url.searchParams.get('include-marks') === 'true');
    if (path === '/market-data/by-type') return this.marketData(req);
    if (path === '/api-quote-tokens') return this.quoteToken();
    return { status: 404, body: { error: { code: 'not_found', message: 'Not found' } } };
  }

  private deny(code: string, message: string): SimResponse {
    this.unauthorized += 1;
    return { status: 401, body: { error: { code, message } } };
  }

  private token(req: SimRequest): SimResponse {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.grant_type !== 'refresh_token')
      return { status: 400, body: { error_code: 'unsupported_grant_type', error_description: 'Only refresh_token is supported' } };
    if (body.refresh_token !== this.credentials.refreshToken || body.client_secret !== this.credentials.clientSecret) {
      return { status: 401, body: { error_code: 'invalid_grant', error_description: 'Grant is invalid or was revoked' } };
    }
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, this.now() + this.tokenLifetimeSeconds * 1000);
    this.lastToken = token;
    return { status: 200, body: { access_token: token, expires_in: this.tokenLifetimeSeconds, token_type: 'Bearer' } };
  }

  /** As documented: the token, the DXLink address (this simulator's socket; /delayed for a demo token) and the data level. */
  private quoteToken(): SimResponse {
    const origin = this.credentials.dxlinkOrigin ?? this.origin.replace(/^http/, 'ws');
    const path = this.level === 'demo' ? DXLINK_DELAYED_PATH : DXLINK_PATH;
    const data = { token: this.stream.issueToken(), 'dxlink-url': `${origin}${path}`, level: this.level };
    return envelope('/api-quote-tokens', data);
  }

  private positions(accountNumber: string, marks: boolean): SimResponse {
    const account = ACCOUNTS.find((a) => a.number === accountNumber);
    if (account === undefined)
      return { status: 403, body: { error: { code: 'not_permitted', message: 'You do not have access to this account' } } };
    const now = this.now();
    const items = Array.from({ length: account.positions }, (_, i) => positionItem(account.number, i, now, marks));
    return envelope(`/accounts/${accountNumber}/positions`, { items });
  }

  private marketData(req: SimRequest): SimResponse {
    const now = this.now();
    const requested: [string, string | undefined, string][] = [];
    for (const [type, param] of [
      ['Equity', 'equity'],
      ['Index', 'index'],
      ['Cryptocurrency', 'cryptocurrency'],
    ] as const) {
      for (const symbol of (req.url.searchParams.get(param) ?? '').split(',').filter(Boolean)) {
        const ours =
          param === 'equity'
            ? findInstrument(symbol)?.symbol
            : param === 'index'
              ? INDICES[symbol.toUpperCase()]
              : CRYPTO[symbol.toUpperCase()];
        requested.push([symbol, ours, type]);
      }
    }
    if (requested.length === 0)
      return { status: 400, body: { error: { code: 'invalid_symbols', message: 'At least one symbol is required' } } };
    if (requested.length > MAX_SYMBOLS)
      return { status: 400, body: { error: { code: 'too_many_symbols', message: `At most ${MAX_SYMBOLS} symbols` } } };
    const items = requested
      .filter(([, ours]) => ours !== undefined)
      .map(([symbol, ours, type]) => {
        const kind = type === 'Index' ? 'index' : type === 'Cryptocurrency' ? 'crypto' : 'equity';
        const quote = this.market.quote({ ours: ours as string, kind }, now);
        return quoteItem(symbol.toUpperCase(), ours as string, type, quote, now);
      });
    // Recorded so: market data carries "pagination": null in its envelope, positions and accounts none.
    return { status: 200, body: { data: { items }, pagination: null, context: '/market-data/by-type' } };
  }
}

function envelope(context: string, data: unknown): SimResponse {
  return { status: 200, body: { data, context } };
}

/** A decimal string as Tastytrade writes one: at least one decimal ("4.0", "210.6"). */
function decimal(value: number, digits = 2): string {
  const text = String(round(value, digits));
  return text.includes('.') || text.includes('e') ? text : `${text}.0`;
}

function isoDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

function accountItem(a: SimAccount): Record<string, unknown> {
  return {
    account: {
      // No external-id, is-test-drive or funding-date: the recorded account list has none.
      'account-number': a.number,
      'opened-at': '2023-04-12T14:02:11.000+00:00',
      nickname: a.nickname,
      'account-type-name': a.typeName,
      'day-trader-status': false,
      'is-closed': false,
      'is-firm-error': false,
      'is-firm-proprietary': false,
      'is-futures-approved': a.marginOrCash === 'Margin',
      'margin-or-cash': a.marginOrCash,
      'is-foreign': false,
      'investment-objective': 'GROWTH',
      'suitable-options-level': 'No Restrictions',
      'created-at': '2023-04-12T14:02:11.000+00:00',
    },
    'authority-level': 'owner',
  };
}

/** As recorded: quantity an integer string, prices decimal strings, the multiplier a number, no expires-at for shares. */
function positionItem(account: string, i: number, now: number, marks: boolean): Record<string, unknown> {
  const instrument = UNIVERSE[(i * 7 + (account.endsWith('2') ? 3 : 0)) % UNIVERSE.length]!;
  const seed = `tt:${account}:${i}`;
  const mark = priceAt(instrument.symbol, now);
  const short = i % 5 === 1;
  const quantity = 1 + Math.floor(unit(`qty:${seed}`) * 200);
  const item: Record<string, unknown> = {
    'account-number': account,
    symbol: instrument.symbol.replace('.', '/'),
    'instrument-type': 'Equity',
    'underlying-symbol': instrument.symbol.replace('.', '/'),
    quantity: String(quantity),
    'quantity-direction': short ? 'Short' : 'Long',
    'close-price': decimal(previousClose(instrument.symbol, now)),
    'average-open-price': decimal(mark * (0.8 + unit(`avg:${seed}`) * 0.35)),
    'average-yearly-market-close-price': decimal(mark * 0.92),
    'average-daily-market-close-price': decimal(previousClose(instrument.symbol, now)),
    multiplier: 1,
    'cost-effect': short ? 'Debit' : 'Credit',
    'is-suppressed': false,
    'is-frozen': false,
    'restricted-quantity': '0.0',
    'realized-day-gain': '0.0',
    'realized-day-gain-effect': 'None',
    'realized-day-gain-date': isoDay(now),
    'realized-today': '0.0',
    'realized-today-effect': 'None',
    'realized-today-date': isoDay(now),
    'created-at': '2024-01-08T15:31:07.000+00:00',
    'updated-at': new Date(now).toISOString(),
  };
  if (marks) {
    item.mark = decimal(mark);
    item['mark-price'] = round(mark, 2);
  }
  return item;
}

/**
 * One market data item, keyed as the recorded ones are: every type has the common keys; equities add
 * beta, limits, close and volume (and the dividend for payers); crypto has no close and no volume.
 */
function quoteItem(symbol: string, ours: string, type: string, q: TastytradeQuote, now: number): Record<string, unknown> {
  const { last, previousClose: prev, volume } = q;
  const item: Record<string, unknown> = {
    symbol,
    'instrument-type': type,
    'updated-at': new Date(now).toISOString(),
    bid: decimal(q.bid),
    'bid-size': type === 'Index' ? null : decimal(q.bidSize, 0),
    ask: decimal(q.ask),
    'ask-size': type === 'Index' ? null : decimal(q.askSize, 0),
    mid: decimal((q.bid + q.ask) / 2, 3),
    mark: decimal((q.bid + q.ask) / 2, 3),
    last: decimal(last),
    'last-mkt': decimal(last),
    open: decimal(q.open),
    'day-high-price': decimal(Math.max(last, prev) * 1.004),
    'day-low-price': decimal(Math.min(last, prev) * 0.996),
    'close-price-type': 'Regular',
    'prev-close': decimal(prev),
    'prev-close-price-type': 'Final',
    'summary-date': isoDay(now),
    'prev-close-date': isoDay(now - 86_400_000),
    'is-trading-halted': false,
    'halt-start-time': -1,
    'halt-end-time': -1,
    'year-low-price': decimal(last * (0.6 + unit(`yl:${ours}`) * 0.3)),
    'year-high-price': decimal(last * (1.05 + unit(`yh:${ours}`) * 0.4)),
  };
  if (type === 'Cryptocurrency') return item;
  item.close = decimal(prev);
  if (type === 'Index') return { ...item, volume: null };
  const dividend = findInstrument(ours)?.dividend;
  return {
    ...item,
    beta: decimal(0.6 + unit(`beta:${ours}`) * 1.6, 9),
    ...(dividend !== undefined && dividend.frequency > 0
      ? { 'dividend-amount': decimal((dividend.yield * last) / dividend.frequency), 'dividend-frequency': decimal(dividend.frequency, 0) }
      : {}),
    'low-limit-price': decimal(prev * 0.9),
    'high-limit-price': decimal(prev * 1.1),
    volume: decimal(volume, 0),
  };
}

export function createTastytradeSimulator(options: TastytradeSimulatorOptions): TastytradeSimulator {
  return new TastytradeSimulator(options);
}
