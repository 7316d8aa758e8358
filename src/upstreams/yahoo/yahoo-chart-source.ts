// The Yahoo chart adapter: v8 chart calls, no key, a browser-like User-Agent (Yahoo turns some clients
// away without one), one budget for every call (the overview's and the fallback's), and a back-off when
// it says 429. The overview reads one-day charts; quotes and indicators read the stored bar series these
// charts fill (chart-series.ts), their pre- and post-market bars included on intraday charts.
import { UpstreamRefusalError } from '../../core/errors.js';
import { YAHOO } from '../../core/upstream-ids.js';
import type { BudgetGuard } from '../../budget/budget-guard.js';
import type { HttpClient } from '../http-client.js';
import type { InstrumentSnapshot, OverviewSource } from '../overview-source.js';
import {
  type ChartResponse,
  type ChartResult,
  type Classified,
  classifyChart,
  classifyChartResponse,
  OVERVIEW_CHART,
} from './parse-chart.js';

/** @internal */
export const BROWSER_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

export interface YahooChartSourceOptions {
  url: string;
  http: HttpClient;
  /** YAHOO_CALLS_PER_MINUTE; after a 429 it also carries the back-off so we stop knocking. */
  budget: BudgetGuard;
}

export interface ChartRequest {
  range: string;
  interval: string;
  prePost?: boolean;
}

export class YahooChartSource implements OverviewSource {
  readonly name = YAHOO;

  constructor(private readonly options: YahooChartSourceOptions) {}

  async fetchInstrument(symbol: string): Promise<InstrumentSnapshot> {
    const { range, interval } = OVERVIEW_CHART;
    return this.read(chartUrl(this.options.url, symbol, range, interval), (res) => classifyChartResponse(res, symbol, range));
  }

  /** One chart of `symbol` (a Yahoo symbol), read by `parse`; `prePost` asks for extended-hours bars (includePrePost). */
  async fetchChart<T>(symbol: string, ask: ChartRequest, parse: (chart: ChartResult, symbol: string) => T): Promise<T> {
    const url = chartUrl(this.options.url, symbol, ask.range, ask.interval);
    if (ask.prePost === true) url.searchParams.set('includePrePost', 'true');
    return this.read(url, (res) => classifyChart(res, symbol, parse));
  }

  async close(): Promise<void> {
    await this.options.http.close();
  }

  private async read<T>(url: URL, classify: (res: ChartResponse) => Classified<T>): Promise<T> {
    await this.options.budget.acquire();
    const res = await this.options.http.request(url, { headers: { 'user-agent': BROWSER_USER_AGENT } });
    const classified = classify(res);
    if (classified.kind === 'refusal') {
      await this.options.budget.backOff(classified.retryAfterMs);
      throw new UpstreamRefusalError(classified.message, classified.retryAfterMs / 1000);
    }
    if (classified.kind === 'error') throw classified.error;
    return classified.value;
  }
}

/** `^GSPC` becomes `%5EGSPC`, `GC=F` becomes `GC%3DF`: the symbol is one path segment, whatever it holds. @internal */
export function chartUrl(base: string, symbol: string, range = '1d', interval = '1d'): URL {
  const url = new URL(`${base.replace(/\/+$/, '')}/v8/finance/chart/${encodeURIComponent(symbol)}`);
  url.searchParams.set('range', range);
  url.searchParams.set('interval', interval);
  return url;
}
