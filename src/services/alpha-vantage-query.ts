// GET /api/provider-a/query reads Alpha Vantage's own parameters here. A function the service owns is answered
// from its own services (stored quotes and bars, computed indicators, the fallback) with exactly the checks
// /quote, /technical, /search and /daily make; any other documented function is forwarded with its documented
// parameters only (the caller's apikey and anything undocumented dropped). `datatype=csv` is answered as Alpha
// Vantage answers it: the owned functions' CSV is rendered from the same stored answer, so it is as fresh as
// the JSON and costs no call; a forwarded function's CSV is asked for and cached under its own key.
import type { CacheEntry, CacheResult } from '../cache/cache-store.js';
import { ApiError } from '../core/errors.js';
import type { Freshness } from '../core/freshness.js';
import { echoed, parameterText } from '../core/parameter-text.js';
import { SYMBOL_PATTERN } from '../core/symbol-list.js';
import type { ForwardCall } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { csvOf } from '../wire/alpha-vantage/csv.js';
import { type FunctionSpec, functionSpec, ownerOf } from '../wire/alpha-vantage/functions.js';
import { INTERVALS } from '../wire/alpha-vantage/indicators.js';
import { invalidApiCall } from '../wire/alpha-vantage/notices.js';
import { given } from '../wire/alpha-vantage/parameter-values.js';
import type { DataSource } from './data-source.js';
import { PRIMARY } from './data-source.js';
import type { ForwardService } from './forward-service.js';
import { readEnum, required, seriesQuery } from './query-params.js';
import type { QuoteService, SourcedResult } from './quote-service.js';
import type { SearchService } from './search-service.js';
import type { SeriesService } from './series-service.js';
import { type TechnicalService, technicalQuery } from './technical-service.js';

export interface QueryAnswer {
  /** `freshness`: how fresh a quote's or a series' values are (X-Data-Freshness), its CSV rendering alike. */
  result: CacheResult<unknown> & { freshness?: Freshness };
  source: DataSource;
  /** The hot path's hook for a quote's demand (QuoteService). */
  onHotAnswer?: SourcedResult<unknown>['onHotAnswer'];
  format: 'json' | 'csv';
}

export interface AlphaVantageQueryOptions {
  quotes: QuoteService;
  technical: TechnicalService;
  search: SearchService;
  series: SeriesService;
  forwarded: ForwardService;
}

type Raw = Record<string, unknown>;

export class AlphaVantageQuery {
  constructor(private readonly options: AlphaVantageQueryOptions) {}

  /**
   * `function` in its canonical spelling (trimmed, upper case), before the route's schema sees it: a name
   * Alpha Vantage does not document is its own invalid-call answer, with no call spent.
   */
  canonicalFunction(raw: unknown): unknown {
    if (typeof raw !== 'string') return raw;
    const fn = parameterText('function', raw).toUpperCase();
    if (functionSpec(fn) === undefined) throw new ApiError('INVALID_PARAMETER', invalidApiCall(echoed(fn))['Error Message']);
    return fn;
  }

  async answer(query: Raw): Promise<QueryAnswer> {
    const spec = functionSpec(String(query.function)) as FunctionSpec;
    const format = readFormat(query.datatype, spec);
    if (ownerOf(spec.name) === undefined) {
      const result = await this.options.forwarded.get(forwardCall(spec, query, format));
      return { result, source: PRIMARY, format };
    }
    const answer = await this.owned(spec.name, query);
    return format === 'csv' ? { ...answer, result: asCsv(answer.result), format } : { ...answer, format };
  }

  private async owned(fn: string, query: Raw): Promise<Omit<QueryAnswer, 'format'>> {
    const { quotes, search, series, technical } = this.options;
    switch (ownerOf(fn)) {
      case 'quote':
        return quotes.get(symbolOf(query, fn));
      case 'search':
        return { result: await search.get(required(query.keywords, 'keywords', fn)), source: PRIMARY };
      case 'series':
        return { result: await series.get(seriesQuery(fn, symbolOf(query, fn), query)), source: PRIMARY };
      default: {
        const symbol = symbolOf(query, fn);
        const interval = readEnum(query.interval, 'interval', INTERVALS) ?? 'daily';
        return technical.get(technicalQuery({ ...query, symbol, indicator: fn, interval }));
      }
    }
  }
}

/** `json`, or `csv` where the function answers it (a CSV-only function always; a JSON-only one ignores `datatype`). */
function readFormat(raw: unknown, spec: FunctionSpec): 'json' | 'csv' {
  const datatype = readEnum(raw, 'datatype', ['json', 'csv'] as const);
  if (spec.formats !== 'both') return spec.formats;
  return datatype ?? 'json';
}

/** An owned function's symbol: the service's own symbol syntax, upper case. */
function symbolOf(query: Raw, fn: string): string {
  const symbol = required(query.symbol, 'symbol', fn);
  if (!new RegExp(SYMBOL_PATTERN).test(symbol))
    throw new ApiError('INVALID_PARAMETER', 'symbol must be letters, digits, ".", "-", "^" or "=", at most 20 characters');
  return symbol.toUpperCase();
}

/** The documented parameters the caller gave, in the documented order; a required one missing is a 400, no call. */
function forwardCall(spec: FunctionSpec, query: Raw, format: 'json' | 'csv'): ForwardCall {
  const params: [string, string][] = [];
  for (const name of [...spec.required, ...spec.optional]) {
    const raw = query[name];
    const values = (Array.isArray(raw) && spec.repeatable?.includes(name) ? raw : [raw])
      .map((v) => given(v, name))
      .filter((v): v is string => v !== undefined && v !== '');
    if (values.length === 0 && spec.required.includes(name))
      throw new ApiError('MISSING_PARAMETER', `${name} is required for ${spec.name}`);
    for (const value of values) params.push([name, value]);
  }
  return { fn: spec.name, params, format };
}

const csvEntries = new WeakMap<CacheEntry, CacheEntry<string>>();

/** The CSV of a stored JSON answer: one rendering per entry, with the entry's own age, windows and freshness. */
function asCsv({ entry, status, freshness }: QueryAnswer['result']): QueryAnswer['result'] {
  let csv = csvEntries.get(entry);
  if (csv === undefined) {
    const text = csvOf(entry.value as Record<string, unknown>);
    if (text === undefined) throw new ApiError('INVALID_PARAMETER', 'datatype=csv is not offered for this answer');
    csv = { ...entry, value: text };
    csvEntries.set(entry, csv);
  }
  return { entry: csv, status, ...(freshness === undefined ? {} : { freshness }) };
}
