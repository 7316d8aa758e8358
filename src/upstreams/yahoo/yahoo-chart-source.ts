// The Yahoo chart adapter: one v8 chart call per instrument (range=1d, interval=1d), no key, a browser-like
// User-Agent (Yahoo turns some clients away without one), and a back-off when it says 429.
import { UpstreamRefusalError } from '../../errors.js';
import type { BudgetGuard } from '../../budget/budget-guard.js';
import type { HttpClient } from '../http-client.js';
import type { InstrumentSnapshot, OverviewSource } from '../overview-source.js';
import { classifyChartResponse } from './parse-chart.js';

export const YAHOO = 'yahoo';
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

export interface YahooChartSourceOptions {
  url: string;
  http: HttpClient;
  /** No published limit; the guard carries the back-off after a 429 so we stop knocking. */
  budget: BudgetGuard;
}

export class YahooChartSource implements OverviewSource {
  readonly name = YAHOO;

  constructor(private readonly options: YahooChartSourceOptions) {}

  async fetchInstrument(symbol: string): Promise<InstrumentSnapshot> {
    await this.options.budget.acquire();
    const res = await this.options.http.request(chartUrl(this.options.url, symbol), { headers: { 'user-agent': BROWSER_USER_AGENT } });
    const classified = classifyChartResponse(res, symbol);
    if (classified.kind === 'refusal') {
      await this.options.budget.backOff(classified.retryAfterMs);
      throw new UpstreamRefusalError(classified.message, classified.retryAfterMs / 1000);
    }
    if (classified.kind === 'error') throw classified.error;
    return classified.snapshot;
  }

  async close(): Promise<void> {
    await this.options.http.close();
  }
}

/** `^GSPC` becomes `%5EGSPC`, `GC=F` becomes `GC%3DF`: the symbol is one path segment, whatever it holds. */
export function chartUrl(base: string, symbol: string): URL {
  const url = new URL(`${base.replace(/\/+$/, '')}/v8/finance/chart/${encodeURIComponent(symbol)}`);
  url.searchParams.set('range', '1d');
  url.searchParams.set('interval', '1d');
  return url;
}
