// A simulated Tastytrade Open API: OAuth2 refresh-token grant with access tokens that expire, the
// User-Agent requirement, the {data, context} envelope with kebab-case keys and numbers that arrive
// either as strings or as numbers, and the real error bodies (invalid_grant, token_invalid, 401 / 429).
import { randomBytes } from 'node:crypto';
import { previousClose, priceAt, round, unit } from '../price-model.js';
import { type SimRequest, type SimResponse, SimulatedUpstream } from '../simulated-upstream.js';
import { findInstrument, UNIVERSE } from '../universe.js';

export interface TastytradeSimulatorOptions {
  clientSecret: string;
  refreshToken: string;
  /** Access token lifetime in seconds (900 like the real one). */
  tokenLifetimeSeconds?: number;
  now?: () => number;
  host?: string;
  port?: number;
}

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

const INDICES: Record<string, string> = { SPX: '^GSPC', VIX: '^VIX', NDX: '^IXIC', RUT: '^RUT', DJX: '^DJI' };
const CRYPTO: Record<string, string> = { 'BTC/USD': 'BTC-USD', 'ETH/USD': 'ETH-USD' };
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

  constructor(options: TastytradeSimulatorOptions) {
    let self: TastytradeSimulator | undefined;
    super({ name: 'tastytrade', host: options.host, port: options.port, handler: (req) => (self as TastytradeSimulator).answer(req) });
    self = this;
    this.credentials = options;
    this.tokenLifetimeSeconds = options.tokenLifetimeSeconds ?? 900;
    this.now = options.now ?? Date.now;
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
    if (typeof agent !== 'string' || !/^[\w.-]+\/[\w.-]+/.test(agent)) return this.deny('invalid_user_agent', 'A User-Agent of the form product/version is required');
    const path = req.url.pathname;
    if (path === '/oauth/token') return req.method === 'POST' ? this.token(req) : { status: 405, body: { error: { code: 'method_not_allowed', message: 'Use POST' } } };
    const auth = req.headers.authorization;
    const token = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    if (expiresAt === undefined || expiresAt <= this.now()) return this.deny('token_invalid', 'This token is invalid or has expired');
    if (req.method !== 'GET') return { status: 405, body: { error: { code: 'method_not_allowed', message: 'Use GET' } } };
    if (path === '/customers/me/accounts') return envelope(path, { items: ACCOUNTS.map(accountItem) });
    const positions = /^\/accounts\/([^/]+)\/positions$/.exec(path);
    if (positions !== null) return this.positions(decodeURIComponent(positions[1] as string), req.url.searchParams.get('include-marks') === 'true');
    if (path === '/market-data/by-type') return this.marketData(req);
    return { status: 404, body: { error: { code: 'not_found', message: 'Not found' } } };
  }

  private deny(code: string, message: string): SimResponse {
    this.unauthorized += 1;
    return { status: 401, body: { error: { code, message } } };
  }

  private token(req: SimRequest): SimResponse {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.grant_type !== 'refresh_token') return { status: 400, body: { error_code: 'unsupported_grant_type', error_description: 'Only refresh_token is supported' } };
    if (body.refresh_token !== this.credentials.refreshToken || body.client_secret !== this.credentials.clientSecret) {
      return { status: 401, body: { error_code: 'invalid_grant', error_description: 'Grant is invalid or was revoked' } };
    }
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, this.now() + this.tokenLifetimeSeconds * 1000);
    this.lastToken = token;
    return { status: 200, body: { access_token: token, expires_in: this.tokenLifetimeSeconds, token_type: 'Bearer' } };
  }

  private positions(accountNumber: string, marks: boolean): SimResponse {
    const account = ACCOUNTS.find((a) => a.number === accountNumber);
    if (account === undefined) return { status: 403, body: { error: { code: 'not_permitted', message: 'You do not have access to this account' } } };
    const now = this.now();
    const items = Array.from({ length: account.positions }, (_, i) => positionItem(account.number, i, now, marks));
    return envelope(`/accounts/${accountNumber}/positions`, { items });
  }

  private marketData(req: SimRequest): SimResponse {
    const now = this.now();
    const requested: [string, string | undefined, string][] = [];
    for (const [type, param] of [['Equity', 'equity'], ['Index', 'index'], ['Cryptocurrency', 'cryptocurrency']] as const) {
      for (const symbol of (req.url.searchParams.get(param) ?? '').split(',').filter(Boolean)) {
        const ours = param === 'equity' ? findInstrument(symbol)?.symbol : param === 'index' ? INDICES[symbol.toUpperCase()] : CRYPTO[symbol.toUpperCase()];
        requested.push([symbol, ours, type]);
      }
    }
    if (requested.length === 0) return { status: 400, body: { error: { code: 'invalid_symbols', message: 'At least one symbol is required' } } };
    if (requested.length > MAX_SYMBOLS) return { status: 400, body: { error: { code: 'too_many_symbols', message: `At most ${MAX_SYMBOLS} symbols` } } };
    const items = requested.filter(([, ours]) => ours !== undefined).map(([symbol, ours, type]) => quoteItem(symbol.toUpperCase(), ours as string, type, now));
    return envelope('/market-data/by-type', { items });
  }
}

function envelope(context: string, data: unknown): SimResponse {
  return { status: 200, body: { data, context } };
}

function accountItem(a: SimAccount): Record<string, unknown> {
  return {
    account: {
      'account-number': a.number,
      'external-id': `A${a.number}`,
      'opened-at': '2023-04-12T14:02:11.000+00:00',
      nickname: a.nickname,
      'account-type-name': a.typeName,
      'day-trader-status': false,
      'is-closed': false,
      'is-firm-error': false,
      'is-firm-proprietary': false,
      'is-futures-approved': a.marginOrCash === 'Margin',
      'is-test-drive': false,
      'margin-or-cash': a.marginOrCash,
      'is-foreign': false,
      'funding-date': '2023-04-14',
      'investment-objective': 'GROWTH',
      'suitable-options-level': 'No Restrictions',
      'created-at': '2023-04-12T14:02:11.000+00:00',
    },
    'authority-level': 'owner',
  };
}

/** Mixed on purpose: the real API sends some numbers as strings and some as numbers. */
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
    quantity: i % 2 === 0 ? String(quantity) : quantity,
    'quantity-direction': short ? 'Short' : 'Long',
    'close-price': previousClose(instrument.symbol, now).toFixed(2),
    'average-open-price': String(round(mark * (0.8 + unit(`avg:${seed}`) * 0.35), 2)),
    'average-yearly-market-close-price': String(round(mark * 0.92, 2)),
    'average-daily-market-close-price': previousClose(instrument.symbol, now).toFixed(2),
    multiplier: 1,
    'cost-effect': short ? 'Debit' : 'Credit',
    'is-suppressed': false,
    'is-frozen': false,
    'restricted-quantity': 0,
    'realized-day-gain': '0.0',
    'realized-day-gain-effect': 'None',
    'realized-today': '0.0',
    'expires-at': null,
    'created-at': '2024-01-08T15:31:07.000+00:00',
    'updated-at': new Date(now).toISOString(),
  };
  if (marks) {
    item.mark = round(mark, 2).toString();
    item['mark-price'] = round(mark, 2);
  }
  return item;
}

function quoteItem(symbol: string, ours: string, type: string, now: number): Record<string, unknown> {
  const last = priceAt(ours, now);
  const prev = previousClose(ours, now);
  const spread = Math.max(0.01, round(last * 0.0002, 2));
  const volume = Math.round(100_000 + unit(`volume:${ours}`) * 50_000_000);
  return {
    symbol,
    'instrument-type': type,
    'updated-at': new Date(now).toISOString(),
    bid: round(last - spread / 2, 2).toString(),
    'bid-size': type === 'Index' ? null : String(100 * (1 + Math.floor(unit(`bs:${ours}`) * 20))),
    ask: round(last + spread / 2, 2).toString(),
    'ask-size': type === 'Index' ? null : 100 * (1 + Math.floor(unit(`as:${ours}`) * 20)),
    mid: round(last, 3).toString(),
    mark: round(last, 3).toString(),
    last: round(last, 2).toString(),
    open: round(prev * (1 + (unit(`open:${ours}`) - 0.5) * 0.01), 2).toString(),
    'day-high-price': round(Math.max(last, prev) * 1.004, 2).toString(),
    'day-low-price': round(Math.min(last, prev) * 0.996, 2).toString(),
    close: round(prev, 2).toString(),
    'prev-close': round(prev, 2).toString(),
    volume: type === 'Index' ? null : String(volume),
    'is-trading-halted': false,
  };
}

export function createTastytradeSimulator(options: TastytradeSimulatorOptions): TastytradeSimulator {
  return new TastytradeSimulator(options);
}
