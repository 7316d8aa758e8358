// The simulator's technical indicators: reads and validates a call's parameters as the real API requires
// them, then computes the indicator on a price-model bar history through the shared indicator module.
import {
  INTERVALS,
  indicatorParams,
  indicatorSpec,
  type ParamKind,
  SERIES_TYPES,
  type Interval,
  type SeriesType,
} from '../../wire/alpha-vantage/indicators.js';
import { MA_TYPES } from '../../indicators/indicator-math.js';
import type { IndicatorParams } from '../../indicators/indicator-params.js';
import { ROWS, technicalBody, warmup } from '../../indicators/technical-body.js';
import { barHistory } from './bar-history.js';

const MAX_PERIOD = 100_000;

/** The parameters of an indicator call, or null when the real API would answer `Invalid API call`. */
export function readIndicatorParams(fn: string, query: URLSearchParams): IndicatorParams | null {
  const spec = indicatorSpec(fn);
  if (spec === undefined) return null;
  const interval = query.get('interval');
  if (interval === null || !(INTERVALS as readonly string[]).includes(interval)) return null;
  let timePeriod: number | null = null;
  if (spec.timePeriod !== null) {
    timePeriod = parseParam(query.get('time_period'), 'period');
    if (timePeriod === null) return null;
  }
  let seriesType: SeriesType | null = null;
  if (spec.seriesType) {
    const raw = query.get('series_type');
    if (raw === null || !(SERIES_TYPES as readonly string[]).includes(raw)) return null;
    seriesType = raw as SeriesType;
  }
  const extra: Record<string, number> = {};
  for (const param of indicatorParams(fn)) {
    const raw = query.get(param.name) ?? spec.extra?.[param.name] ?? null;
    const value = parseParam(raw, param.kind);
    if (value === null) return null;
    extra[param.name] = value;
  }
  return { interval: interval as Interval, timePeriod, seriesType, extra };
}

function parseParam(raw: string | null, kind: ParamKind): number | null {
  if (raw === null || raw.trim() === '') return null;
  const value = Number(raw);
  if (!Number.isFinite(value)) return null;
  switch (kind) {
    case 'period':
      return Number.isInteger(value) && value >= 1 && value <= MAX_PERIOD ? value : null;
    case 'matype':
      return Number.isInteger(value) && value >= 0 && value < MA_TYPES.length ? value : null;
    case 'positive':
      return value > 0 ? value : null;
    case 'real':
      return value;
  }
}

/** The full response body for a valid call; `nowMs` fixes the newest bar. */
export function technicalIndicatorBody(fn: string, symbol: string, params: IndicatorParams, nowMs: number): Record<string, unknown> {
  const bars = barHistory(symbol, params.interval, nowMs, ROWS[params.interval] + warmup(params));
  return technicalBody(fn, symbol, bars, params);
}
