// Yahoo chart bars as Alpha Vantage rows: each bar keyed by its start in the exchange's time zone
// (`YYYY-MM-DD`, intraday `YYYY-MM-DD HH:MM`), bars with a missing price skipped (Yahoo leaves nulls for
// empty or forming bars), a later bar with the same key replacing the earlier one (Yahoo's live daily
// bar can repeat the day). Weekly and monthly bars are aggregated from daily ones and keyed by their last
// trading day, as Alpha Vantage keys them.
import { INTRADAY_INTERVALS, type Interval } from '../../wire/alpha-vantage/indicators.js';
import type { KeyedBar } from '../../indicators/technical-body.js';
import { type ChartResult, finite, isObject, unexpected } from './parse-chart.js';

export interface ChartBars {
  /** Oldest first. */
  bars: KeyedBar[];
  /** The zone the keys are in, named as Alpha Vantage names it (`US/Eastern`). */
  timeZone: string;
}

const DAY_MS = 86_400_000;
/** Alpha Vantage's names for zones it prints (it says `US/Eastern` for New York). */
const AV_ZONE_NAMES: Record<string, string> = { 'America/New_York': 'US/Eastern' };

export function chartBars({ meta, result }: ChartResult, interval: Interval, symbol: string): ChartBars {
  const zone = typeof meta.exchangeTimezoneName === 'string' ? meta.exchangeTimezoneName : undefined;
  if (zone === undefined || !validZone(zone)) throw unexpected(symbol, 'chart-time-zone', 'a chart without its exchange time zone');
  const intraday = INTRADAY_INTERVALS.has(interval);
  const daily = keyedBars(result, zoneFormat(zone, intraday));
  const bars = interval === 'weekly' ? grouped(daily, weekOf) : interval === 'monthly' ? grouped(daily, (key) => key.slice(0, 7)) : daily;
  return { bars, timeZone: AV_ZONE_NAMES[zone] ?? zone };
}

function keyedBars(result: Record<string, unknown>, keyOf: (ms: number) => string): KeyedBar[] {
  const times = Array.isArray(result.timestamp) ? result.timestamp : [];
  const indicators = isObject(result.indicators) ? result.indicators : undefined;
  const quote = Array.isArray(indicators?.quote) && isObject(indicators.quote[0]) ? indicators.quote[0] : {};
  const column = (name: string) => (Array.isArray(quote[name]) ? (quote[name] as unknown[]) : []);
  const [open, high, low, close, volume] = ['open', 'high', 'low', 'close', 'volume'].map(column) as unknown[][];
  const bars: KeyedBar[] = [];
  times.forEach((time, i) => {
    const t = finite(time);
    const o = finite(open?.[i]),
      h = finite(high?.[i]),
      l = finite(low?.[i]),
      c = finite(close?.[i]);
    if (t === undefined || o === undefined || h === undefined || l === undefined || c === undefined) return;
    const bar = { key: keyOf(t * 1000), open: o, high: h, low: l, close: c, volume: finite(volume?.[i]) ?? 0 };
    if (bars.length > 0 && bars[bars.length - 1]?.key === bar.key) bars[bars.length - 1] = bar;
    else bars.push(bar);
  });
  return bars;
}

/** `YYYY-MM-DD` or `YYYY-MM-DD HH:MM` of an instant in `zone`. */
function zoneFormat(zone: string, withTime: boolean): (ms: number) => string {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    ...(withTime ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } : {}),
  });
  return (ms) => {
    const p = Object.fromEntries(format.formatToParts(ms).map((part) => [part.type, part.value]));
    const day = `${p.year}-${p.month}-${p.day}`;
    return withTime ? `${day} ${p.hour}:${p.minute}` : day;
  };
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Monday-to-Sunday weeks, numbered from the key's calendar day (day 0, 1970-01-01, was a Thursday). */
function weekOf(key: string): string {
  return String(Math.floor((Date.parse(`${key}T00:00:00Z`) / DAY_MS + 3) / 7));
}

/** Consecutive bars of one group as one bar, keyed by the group's last bar. */
function grouped(days: readonly KeyedBar[], groupOf: (key: string) => string): KeyedBar[] {
  const bars: KeyedBar[] = [];
  let group: string | undefined;
  for (const day of days) {
    const g = groupOf(day.key);
    const last = bars[bars.length - 1];
    if (last === undefined || g !== group) {
      bars.push({ ...day });
    } else {
      bars[bars.length - 1] = {
        key: day.key,
        open: last.open,
        high: Math.max(last.high, day.high),
        low: Math.min(last.low, day.low),
        close: day.close,
        volume: last.volume + day.volume,
      };
    }
    group = g;
  }
  return bars;
}
