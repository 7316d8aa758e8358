// Commodities and economic indicators: `{ name, interval, unit, data: [{ date, value }] }`, newest first,
// values as strings. Recorded: REAL_GDP (annual, billions of dollars), REAL_GDP_PER_CAPITA, TREASURY_YIELD and
// CPI (2022). The names and units of the rest are the ones Alpha Vantage's answers are quoted with in
// third-party code (WTI "Crude Oil Prices WTI", "dollars per barrel"); daily prices hold "." on a day the
// source has no value, as quoted WTI answers show.
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { DAY_MS } from '../../core/us-market-time.js';
import { priceAt, unit } from '../price-model.js';
import { formatDecimal } from './format.js';

type Interval = 'daily' | 'weekly' | 'monthly' | 'quarterly' | 'semiannual' | 'annual';

interface Series {
  name: string;
  unit: string;
  level: number;
  decimals: number;
  intervals: readonly Interval[];
}

const DWM: readonly Interval[] = ['daily', 'weekly', 'monthly'];
const MQA: readonly Interval[] = ['monthly', 'quarterly', 'annual'];
const per = (name: string, unitName: string, level: number, decimals = 2, intervals = MQA): Series => ({
  name,
  unit: unitName,
  level,
  decimals,
  intervals,
});

const SERIES: Record<string, Series> = {
  WTI: per('Crude Oil Prices WTI', 'dollars per barrel', 78, 2, DWM),
  BRENT: per('Crude Oil Prices Brent', 'dollars per barrel', 82, 2, DWM),
  NATURAL_GAS: per('Henry Hub Natural Gas Spot Price', 'dollars per million BTU', 2.4, 2, DWM),
  COPPER: per('Global Price of Copper', 'dollar per metric ton', 9_100),
  ALUMINUM: per('Global Price of Aluminum', 'dollar per metric ton', 2_300),
  WHEAT: per('Global Price of Wheat', 'dollar per metric ton', 280),
  CORN: per('Global Price of Corn', 'dollar per metric ton', 210),
  COTTON: per('Global Price of Cotton', 'cent per pound', 92),
  SUGAR: per('Global Price of Sugar', 'cent per pound', 21),
  COFFEE: per('Global Price of Coffee', 'cent per pound', 190),
  ALL_COMMODITIES: per('Global Price Index of All Commodities', 'index 2016=100', 170),
  GOLD_SILVER_HISTORY: per('Gold and Silver Prices', 'dollars per troy ounce', 2_350, 2, DWM),
  REAL_GDP: per('Real Gross Domestic Product', 'billions of dollars', 22_000, 3, ['quarterly', 'annual']),
  REAL_GDP_PER_CAPITA: per('Real Gross Domestic Product per Capita', 'chained 2012 dollars', 66_000, 1, ['quarterly']),
  TREASURY_YIELD: per('10-Year Treasury Constant Maturity Rate', 'percent', 4.3, 2, DWM),
  FEDERAL_FUNDS_RATE: per('Effective Federal Funds Rate', 'percent', 5.33, 2, DWM),
  CPI: per('Consumer Price Index for all Urban Consumers', 'index 1982-1984=100', 310, 3, ['monthly', 'semiannual']),
  INFLATION: per('Inflation - US Consumer Prices', 'percent', 3.4, 8, ['annual']),
  RETAIL_SALES: per('Advance Retail Sales: Retail Trade', 'millions of dollars', 620_000, 0, ['monthly']),
  DURABLES: per("Manufacturers' New Orders: Durable Goods", 'millions of dollars', 285_000, 0, ['monthly']),
  UNEMPLOYMENT: per('Unemployment Rate', 'percent', 3.9, 1, ['monthly']),
  NONFARM_PAYROLL: per('Total Nonfarm Payroll', 'thousands of persons', 158_000, 0, ['monthly']),
};

/** TREASURY_YIELD's maturities, as the series name spells them. */
const MATURITIES: Record<string, string> = {
  '3month': '3-Month',
  '2year': '2-Year',
  '5year': '5-Year',
  '7year': '7-Year',
  '10year': '10-Year',
  '30year': '30-Year',
};

export const ECONOMY_FUNCTIONS: readonly string[] = Object.keys(SERIES);

export function economySeries(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const series = SERIES[fn];
  if (series === undefined) return invalidApiCall(fn);
  const interval = (query.get('interval') ?? defaultInterval(fn, series)) as Interval;
  const maturity = query.get('maturity') ?? '10year';
  if (!series.intervals.includes(interval) || (fn === 'TREASURY_YIELD' && !(maturity in MATURITIES))) return invalidApiCall(fn);
  if (fn === 'GOLD_SILVER_HISTORY' && !['GOLD', 'XAU', 'SILVER', 'XAG'].includes((query.get('symbol') ?? '').toUpperCase()))
    return invalidApiCall(fn);
  const name = fn === 'TREASURY_YIELD' ? series.name.replace('10-Year', MATURITIES[maturity] as string) : series.name;
  const data = dates(interval, nowMs, interval === 'daily' ? 250 : 120).map((date) => ({
    date,
    value: interval === 'daily' && unit(`gap:${fn}:${date}`) < 0.04 ? '.' : valueAt(fn, series, Date.parse(date)),
  }));
  return { name, interval, unit: series.unit, data };
}

/** Alpha Vantage's defaults: monthly, annual for GDP, quarterly where that is the only one. */
function defaultInterval(fn: string, series: Series): Interval {
  if (fn === 'REAL_GDP') return 'annual';
  return series.intervals.includes('monthly') ? 'monthly' : (series.intervals[0] as Interval);
}

function valueAt(fn: string, series: Series, timeMs: number): string {
  const seed = `econ:${fn}`;
  // A third of a stock's swings: an economy moves more slowly than a share price.
  return formatDecimal(series.level * (1 + (priceAt(seed, timeMs) / priceAt(seed, 0) - 1) / 3), series.decimals);
}

/** The first day of each period (days: weekdays; weeks: their Friday), newest first, none later than now. */
function dates(interval: Interval, nowMs: number, count: number): string[] {
  const out: string[] = [];
  const now = new Date(nowMs);
  const months = { monthly: 1, quarterly: 3, semiannual: 6, annual: 12 } as Record<Interval, number>;
  for (let i = 0; out.length < count; i += 1) {
    let ms: number;
    if (interval === 'daily') {
      ms = (Math.floor(nowMs / DAY_MS) - 1 - i) * DAY_MS;
      const day = new Date(ms).getUTCDay();
      if (day === 0 || day === 6) continue;
    } else if (interval === 'weekly') {
      const day = Math.floor(nowMs / DAY_MS) - 7 * (i + 1);
      ms = (day - ((day + 3) % 7) + 4) * DAY_MS;
    } else {
      const step = months[interval];
      const first = Math.floor((now.getUTCFullYear() * 12 + now.getUTCMonth()) / step) * step - step * (i + 1);
      ms = Date.UTC(Math.floor(first / 12), first % 12, 1);
    }
    out.push(new Date(ms).toISOString().slice(0, 10));
  }
  return out;
}
