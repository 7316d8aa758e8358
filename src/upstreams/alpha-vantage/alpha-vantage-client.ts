// The Alpha Vantage adapter: builds the query from validated values only, spends the budget before each
// call, and classifies every body. The key goes into the upstream URL and nowhere else. Every call, the
// functions the service reads and the ones it forwards alike, leaves through send(): the one place where a
// parameter every call carries (the key, the plan's entitlement) is added, and where the plan refuses a premium
// function.
import type { AlphaVantageEntitlement } from '../../core/config.js';
import { ApiError, NotFoundAnswerError, PlanRefusalError, UpstreamRefusalError } from '../../core/errors.js';
import type { BudgetGuard } from '../../budget/budget-guard.js';
import { dayOf, minuteOf } from '../../budget/budget-ledger.js';
import type { HttpClient } from '../http-client.js';
import type { UpstreamResponse } from '../http-client.js';
import { type Classified, classifyAlphaVantageBody, classifyAlphaVantageCsv, type LimitWindow } from './classify-body.js';
import { functionSpec } from '../../wire/alpha-vantage/functions.js';
import { PREMIUM_ENDPOINT } from '../../wire/alpha-vantage/notices.js';
import { ENTITLED_FUNCTIONS } from './entitlement.js';
import { indicatorParams, indicatorSpec, type Interval, type SeriesType } from '../../wire/alpha-vantage/indicators.js';
import type { GlobalQuoteBody, SymbolSearchBody } from '../../wire/alpha-vantage/bodies.js';
import { parseGlobalQuote } from './parse-global-quote.js';
import { parseSymbolSearch } from './parse-symbol-search.js';
import { parseTechnical, type TechnicalBody } from './parse-technical.js';
import { parseTimeSeries, type TimeSeriesBody } from './parse-time-series.js';
import { type SeriesQuery, takesOutputSize } from '../../wire/alpha-vantage/time-series.js';

export interface TechnicalQuery {
  symbol: string;
  indicator: string;
  interval: Interval;
  timePeriod?: number;
  seriesType?: SeriesType;
  /** The indicator's extra parameters (indicator-options.ts); absent ones get their defaults. */
  extra?: Readonly<Record<string, string>>;
  /** `YYYY-MM`, intraday intervals only. */
  month?: string;
}

/** A call of a function the service forwards: its documented parameters only, in a canonical order. */
export interface ForwardCall {
  fn: string;
  /** Name and value pairs; a name repeats only where the function documents it (ANALYTICS_* RANGE). */
  params: readonly (readonly [string, string])[];
  format: 'json' | 'csv';
}

/** A forwarded answer: the JSON object, or the CSV text, as Alpha Vantage sent it. */
export type Forwarded = Record<string, unknown> | string;

export interface AlphaVantageClientOptions {
  url: string;
  apiKey: string;
  http: HttpClient;
  budget: BudgetGuard;
  /** free: a premium function is refused here with Alpha Vantage's own notice, before the budget. */
  plan: 'free' | 'premium';
  /** ALPHA_VANTAGE_ENTITLEMENT: sent as `entitlement` on the functions the plan changes (entitlement.ts). */
  entitlement?: AlphaVantageEntitlement;
}

/** The provider asks for one call a second; two leave a margin for jitter. */
const SECOND_BACKOFF_MS = 2_000;

export class AlphaVantageClient {
  /**
   * Refusals in a row, each met by the first call after the previous back-off ended: the next back-off
   * takes the next longer window the text names (a minute doubling up to the day when it names none).
   */
  private refusedInARow = 0;
  private backedOffUntil = 0;

  constructor(private readonly options: AlphaVantageClientOptions) {}

  async globalQuote(symbol: string): Promise<GlobalQuoteBody> {
    return parseGlobalQuote(await this.call({ function: 'GLOBAL_QUOTE', symbol }));
  }

  async technical(query: TechnicalQuery): Promise<TechnicalBody> {
    return parseTechnical(await this.call(technicalParams(query)), query.indicator);
  }

  async symbolSearch(keywords: string): Promise<SymbolSearchBody> {
    return parseSymbolSearch(await this.call({ function: 'SYMBOL_SEARCH', keywords }));
  }

  async timeSeries(query: SeriesQuery): Promise<TimeSeriesBody> {
    return parseTimeSeries(await this.call(seriesParams(query)), query.fn, query.interval);
  }

  /** Whether the key's plan may call `fn` (a free key may not call a premium function). */
  planAllows(fn: string): boolean {
    return this.options.plan === 'premium' || functionSpec(fn)?.premium !== true;
  }

  /** A function the service does not read itself, passed on: the JSON object or the CSV text. */
  async forward(call: ForwardCall): Promise<Forwarded> {
    const res = await this.send([['function', call.fn], ...call.params, ...(call.format === 'csv' ? [['datatype', 'csv'] as const] : [])]);
    // `{}` is how Alpha Vantage answers a fundamentals call for a symbol it has none for (an ETF's OVERVIEW):
    // the symbol's answer, not the provider failing as it is for the series the service reads itself. Only
    // the fundamentals' `{}` is remembered: for a series it has been the provider failing for a day
    // (time-series-daily-empty-object-gbtc), so there it is asked again.
    if (isEmptyObject(res.json)) {
      this.refusedInARow = 0;
      const message = `Alpha Vantage has no ${call.fn} data for this symbol`;
      throw functionSpec(call.fn)?.family === 'FUNDAMENTALS' ? new NotFoundAnswerError(message) : new ApiError('SYMBOL_NOT_FOUND', message);
    }
    const classified = call.format === 'csv' ? classifyAlphaVantageCsv(res.text, res.json) : classifyAlphaVantageBody(res.json);
    if (classified.kind !== 'csv') return this.accept(classified);
    this.refusedInARow = 0;
    return classified.text;
  }

  private async call(params: Record<string, string>): Promise<Record<string, unknown>> {
    return this.accept(classifyAlphaVantageBody((await this.send(Object.entries(params))).json));
  }

  private async send(params: readonly (readonly [string, string])[]): Promise<UpstreamResponse> {
    const fn = params.find(([name]) => name === 'function')?.[1] ?? '';
    if (!this.planAllows(fn)) throw new PlanRefusalError(PREMIUM_ENDPOINT.Information);
    const url = new URL(this.options.url);
    // URLSearchParams encodes every value, so nothing a caller sends can add a parameter.
    for (const [name, value] of params) url.searchParams.append(name, value);
    const { entitlement } = this.options;
    if (entitlement !== undefined && ENTITLED_FUNCTIONS.has(fn)) url.searchParams.set('entitlement', entitlement);
    url.searchParams.set('apikey', this.options.apiKey);

    await this.options.budget.acquire();
    const res = await this.options.http.request(url);
    if (res.status === 429) return this.refuse('Alpha Vantage answered 429 Too Many Requests', ['minute', 'day']);
    if (res.status !== 200) throw new ApiError('UPSTREAM_ERROR', `Alpha Vantage answered HTTP ${res.status}`);
    return res;
  }

  private async accept(classified: Classified): Promise<Record<string, unknown>> {
    if (classified.kind === 'refusal') return this.refuse(classified.message, classified.windows);
    this.refusedInARow = 0;
    if (classified.kind === 'error') throw classified.error;
    return classified.body;
  }

  /** How long to send nothing after a refusal, in the guard's own minute and day (benchmarks scale them). */
  private backOffMs(windows: readonly LimitWindow[]): number {
    const now = Date.now();
    // A refusal long after the last back-off ended starts over at the shortest window.
    const again = now < this.backedOffUntil + minuteOf(this.options.budget.limits);
    this.refusedInARow = again ? this.refusedInARow + 1 : 1;
    const ms = this.windowMs(windows, this.refusedInARow - 1);
    this.backedOffUntil = now + ms;
    return ms;
  }

  private windowMs(windows: readonly LimitWindow[], step: number): number {
    const { limits } = this.options.budget;
    const length = { second: SECOND_BACKOFF_MS, minute: minuteOf(limits), day: dayOf(limits) };
    if (windows.length === 0) return Math.min(length.day, length.minute * 2 ** step);
    return length[windows[Math.min(step, windows.length - 1)] as LimitWindow];
  }

  private async refuse(message: string, windows: readonly LimitWindow[]): Promise<never> {
    const retryAfterMs = this.backOffMs(windows);
    await this.options.budget.backOff(retryAfterMs);
    // A notice naming no window is a wording the classifier does not know: handled, and counted as drift.
    throw new UpstreamRefusalError(message, retryAfterMs / 1000, windows.length === 0 ? 'unrecognised-notice' : undefined);
  }
}

/** The real API requires interval, and time_period / series_type where the indicator takes them. @internal */
export function technicalParams(query: TechnicalQuery): Record<string, string> {
  const spec = indicatorSpec(query.indicator);
  if (spec === undefined) throw new ApiError('INVALID_PARAMETER', `unknown indicator ${query.indicator}`);
  const params: Record<string, string> = { function: query.indicator, symbol: query.symbol, interval: query.interval };
  if (spec.timePeriod !== null) params.time_period = String(query.timePeriod ?? spec.timePeriod);
  if (spec.seriesType) params.series_type = query.seriesType ?? 'close';
  for (const { name } of indicatorParams(query.indicator)) params[name] = query.extra?.[name] ?? (spec.extra?.[name] as string);
  if (query.month !== undefined) params.month = query.month;
  return params;
}

/** Only the parameters the function takes; intraday needs `interval`, which the route always supplies. @internal */
export function seriesParams(query: SeriesQuery): Record<string, string> {
  const params: Record<string, string> = { function: query.fn, symbol: query.symbol };
  if (takesOutputSize(query.fn)) params.outputsize = query.outputsize ?? 'compact';
  if (query.fn === 'TIME_SERIES_INTRADAY') {
    params.interval = query.interval ?? '5min';
    if (query.month !== undefined) params.month = query.month;
    if (query.extendedHours !== undefined) params.extended_hours = String(query.extendedHours);
    if (query.adjusted !== undefined) params.adjusted = String(query.adjusted);
  }
  return params;
}

function isEmptyObject(json: unknown): boolean {
  return json !== null && typeof json === 'object' && !Array.isArray(json) && Object.keys(json).length === 0;
}
