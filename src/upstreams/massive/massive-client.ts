// The Massive adapter: builds every URL itself from MASSIVE_URL (a page is fetched by its cursor value,
// never by the upstream's next_url), sends the key as a bearer header so it never sits in a URL, spends
// the budget before each call, and backs off when the upstream says 429. A server that ignores the header
// ("API Key was not provided", recorded with a 400, documented with a 401) gets the key as `apiKey`
// instead, from then on; the HTTP client logs paths only, so the key still never reaches a log line.
import { UpstreamRefusalError } from '../../core/errors.js';
import type { BudgetGuard } from '../../budget/budget-guard.js';
import type { HttpClient } from '../http-client.js';
import { classifyDividendsResponse, type DividendsPage, saysKeyNotProvided } from './parse-dividends.js';

/** @internal */
export const DIVIDENDS_PATH = '/v3/reference/dividends';

export interface DividendsQuery {
  /** Upper-cased ticker, or undefined for all tickers. */
  ticker?: string;
  limit: number;
  /** The upstream cursor of the page to read; when set, the upstream takes the rest of the query from it. */
  cursor?: string;
}

export interface MassiveClientOptions {
  url: string;
  apiKey: string;
  http: HttpClient;
  budget: BudgetGuard;
}

export class MassiveClient {
  private keyInQuery = false;

  constructor(private readonly options: MassiveClientOptions) {}

  async dividends(query: DividendsQuery): Promise<DividendsPage> {
    let res = await this.send(query);
    if (!this.keyInQuery && saysKeyNotProvided(res)) {
      this.keyInQuery = true;
      res = await this.send(query);
    }
    const classified = classifyDividendsResponse(res, { ticker: query.ticker, cursor: query.cursor !== undefined });
    if (classified.kind === 'refusal') {
      await this.options.budget.backOff(classified.retryAfterMs);
      throw new UpstreamRefusalError(classified.message, classified.retryAfterMs / 1000);
    }
    if (classified.kind === 'error') throw classified.error;
    return classified.page;
  }

  private async send(query: DividendsQuery) {
    const url = dividendsUrl(this.options.url, query);
    const headers: Record<string, string> = {};
    if (this.keyInQuery) url.searchParams.set('apiKey', this.options.apiKey);
    else headers.authorization = `Bearer ${this.options.apiKey}`;
    await this.options.budget.acquire();
    return this.options.http.request(url, { headers });
  }
}

/** Newest ex-dividend date first; a cursor page carries only the cursor, as the upstream's next_url does. @internal */
export function dividendsUrl(base: string, query: DividendsQuery): URL {
  const url = new URL(base.replace(/\/+$/, '') + DIVIDENDS_PATH);
  if (query.cursor !== undefined) {
    url.searchParams.set('cursor', query.cursor);
    return url;
  }
  if (query.ticker !== undefined) url.searchParams.set('ticker', query.ticker);
  url.searchParams.set('limit', String(query.limit));
  url.searchParams.set('order', 'desc');
  url.searchParams.set('sort', 'ex_dividend_date');
  return url;
}
