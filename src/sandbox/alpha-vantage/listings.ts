// Lists and calendars: LISTING_STATUS, EARNINGS_CALENDAR and IPO_CALENDAR answer CSV only, with the columns
// third-party code reads them by (`symbol,name,exchange,assetType,ipoDate,delistingDate,status`, an active
// listing's delisting date written `null`); the catalogues and congressional trades are JSON. All from the
// simulated universe.
import { csv } from '../../wire/alpha-vantage/csv.js';
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { DAY_MS } from '../../core/us-market-time.js';
import { priceAt, unit } from '../price-model.js';
import { findInstrument, UNIVERSE } from '../universe.js';
import { formatDecimal } from './format.js';

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function listingStatus(query: URLSearchParams, nowMs: number): unknown {
  const state = query.get('state') ?? 'active';
  const date = query.get('date');
  if (!['active', 'delisted'].includes(state) || (date !== null && !/^\d{4}-\d{2}-\d{2}$/.test(date)))
    return invalidApiCall('LISTING_STATUS');
  const asOf = date === null ? nowMs : Date.parse(date);
  const rows = UNIVERSE.map((i) => {
    const ipo = day(Date.UTC(1980, 0, 1) + Math.floor(unit(`ipo:${i.symbol}`) * 40 * 365) * DAY_MS);
    return [i.symbol, i.name, i.exchange === 'ARCA' ? 'NYSE ARCA' : i.exchange, i.kind === 'etf' ? 'ETF' : 'Stock', ipo, 'null', 'Active'];
  }).filter((row) => Date.parse(row[4] as string) <= asOf);
  // The simulated universe has no delisted companies: the delisted list is its header alone.
  return { csv: csv(['symbol', 'name', 'exchange', 'assetType', 'ipoDate', 'delistingDate', 'status'], state === 'active' ? rows : []) };
}

const HORIZONS: Record<string, number> = { '3month': 3, '6month': 6, '12month': 12 };

export function earningsCalendar(query: URLSearchParams, nowMs: number): unknown {
  const months = HORIZONS[query.get('horizon') ?? '3month'];
  const symbol = query.get('symbol');
  const only = symbol === null ? undefined : findInstrument(symbol);
  if (months === undefined || (symbol !== null && only === undefined)) return invalidApiCall('EARNINGS_CALENDAR');
  const rows = (only === undefined ? UNIVERSE.filter((i) => i.kind === 'stock') : [only]).flatMap((i) =>
    Array.from({ length: months / 3 }, (_, q) => {
      const report = nowMs + (q * 91 + Math.floor(unit(`report:${i.symbol}`) * 90)) * DAY_MS;
      const quarterEnd = new Date(report - 30 * DAY_MS);
      const fiscal = day(Date.UTC(quarterEnd.getUTCFullYear(), Math.floor(quarterEnd.getUTCMonth() / 3) * 3, 0));
      const estimate = unit(`est:${i.symbol}:${q}`) < 0.1 ? '' : formatDecimal(unit(`eps:${i.symbol}:${q}`) * 3, 2);
      return [i.symbol, i.name, day(report), fiscal, estimate, 'USD', unit(`tod:${i.symbol}`) < 0.5 ? 'pre-market' : 'post-market'];
    }),
  );
  rows.sort((a, b) => String(a[2]).localeCompare(String(b[2])));
  return { csv: csv(['symbol', 'name', 'reportDate', 'fiscalDateEnding', 'estimate', 'currency', 'timeOfTheDay'], rows) };
}

export function ipoCalendar(nowMs: number): unknown {
  const rows = Array.from({ length: 6 }, (_, i) => {
    const low = 10 + i * 3 + Math.floor(unit(`ipo-low:${nowMs}:${i}`) * 4);
    return [
      `SIMU${String.fromCharCode(65 + i)}`,
      `Simulated Listing ${i + 1} Inc`,
      day(nowMs + (5 + i * 9) * DAY_MS),
      low,
      low + 2,
      'USD',
      i % 2 === 0 ? 'NASDAQ' : 'NYSE',
    ];
  });
  return { csv: csv(['symbol', 'name', 'ipoDate', 'priceRangeLow', 'priceRangeHigh', 'currency', 'exchange'], rows) };
}

const INDICES: Array<[string, string]> = [
  ['SPX', 'S&P 500 Index'],
  ['DJI', 'Dow Jones Industrial Average'],
  ['COMP', 'NASDAQ Composite Index'],
  ['NDX', 'NASDAQ-100 Index'],
  ['RUT', 'Russell 2000 Index'],
  ['VIX', 'Cboe Volatility Index'],
];

export const INDEX_SYMBOLS: ReadonlySet<string> = new Set(INDICES.map(([s]) => s));

export function indexCatalog(): unknown {
  return { data: INDICES.map(([symbol, name]) => ({ symbol, name })) };
}

const POLITICIANS: Array<[string, string, string]> = [
  ['S000510', 'Simulated Senator', 'Senate'],
  ['H000001', 'Simulated Representative', 'House'],
];

export function politicianMetadata(): unknown {
  return {
    data: POLITICIANS.map(([bioguide_id, name, chamber]) => ({
      bioguide_id,
      name,
      chamber,
      state: 'NY',
      party: 'Independent',
      in_office: 'true',
    })),
  };
}

export function congressTrades(query: URLSearchParams, nowMs: number): unknown {
  const symbol = query.get('symbol');
  const bioguide = query.get('bioguide_id');
  if (symbol === null && bioguide === null) return invalidApiCall('CONGRESS_TRADES');
  const instrument = symbol === null ? UNIVERSE[0] : findInstrument(symbol);
  if (instrument === undefined) return { data: [] };
  const [id, name] = POLITICIANS.find(([p]) => p === bioguide) ?? (POLITICIANS[0] as [string, string, string]);
  return {
    data: [1, 2].map((k) => ({
      bioguide_id: id,
      representative: name,
      ticker: instrument.symbol,
      transaction_date: day(nowMs - k * 20 * DAY_MS),
      disclosure_date: day(nowMs - k * 5 * DAY_MS),
      type: k === 1 ? 'Purchase' : 'Sale',
      amount: '$1,001 - $15,000',
      price: formatDecimal(priceAt(instrument.symbol, nowMs - k * 20 * DAY_MS), 2),
    })),
  };
}
