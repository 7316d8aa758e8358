// get_price_history reads the whole history only when the request reaches past the compact series; when that read
// fails, the compact bars come back with a note saying why, in the caller's words, as an error result would say it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/core/errors.js';
import type { AppDeps } from '../../../src/deps.js';
import { getPriceHistory } from '../../../src/routes/mcp/price-history-tool.js';
import type { ToolContext } from '../../../src/routes/mcp/tool.js';

/** 100 daily bars, the compact series: a request for more asks for the whole history. */
const COMPACT = Object.fromEntries(
  Array.from({ length: 100 }, (_, i) => {
    const day = new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
    return [day, { '1. open': '1', '2. high': '2', '3. low': '0.5', '4. close': '1.5', '5. volume': '100' }];
  }),
);
const PROXY_FAILURE = new ApiError(
  'UPSTREAM_ERROR',
  'provider A could not be reached through the outbound proxy 10.20.0.5:3128 (HTTPS_PROXY)',
  {
    publicMessage: 'provider A could not be reached',
  },
);

function context(local: boolean): ToolContext {
  const series = {
    get: async ({ outputsize }: { outputsize?: string }) => {
      if (outputsize === 'full') throw PROXY_FAILURE;
      return { entry: { value: { 'Time Series (Daily)': COMPACT } }, freshness: { kind: 'fresh' } };
    },
  };
  return { deps: { series } as unknown as AppDeps, local: () => local, status: async () => Promise.reject(new Error('unused')) };
}

test("a failed read of the whole history: the compact bars, and a note in the caller's words (an outsider hears no proxy)", async () => {
  const args = { symbol: 'IBM', interval: 'daily', limit: 150 } as Parameters<typeof getPriceHistory.run>[0];
  const outsider = (await getPriceHistory.run(args, context(false))).content as { bars: unknown[]; note?: string };
  assert.equal(outsider.bars.length, 100);
  assert.match(outsider.note ?? '', /UPSTREAM_ERROR: provider A could not be reached\)/);
  assert.doesNotMatch(outsider.note ?? '', /10\.20\.0\.5|HTTPS_PROXY/);
  const local = (await getPriceHistory.run(args, context(true))).content as { note?: string };
  assert.match(local.note ?? '', /outbound proxy 10\.20\.0\.5:3128/);
});
