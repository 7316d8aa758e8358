// The service in one process against a simulator that counts every call it receives.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Agent, setGlobalDispatcher } from 'undici';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { startApp } from '../helpers/app.js';
import { ask, type CountingUpstream, maxInWindow, startCountingUpstream } from './replicas.js';
import { NO_FALLBACK, UNCAPPED } from '../helpers/config.js';

/** Each test sets the provider-A budget it is about over an uncapped rest, and provider A stands alone: a fallback would answer what the budget refuses. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

setGlobalDispatcher(new Agent({ connections: 2_000, pipelining: 1 }));

const SYMBOLS = UNIVERSE.filter((i) => i.kind === 'stock').map((i) => i.symbol);

async function serviceOn(t: TestContext, upstream: CountingUpstream, env: Record<string, string>) {
  return startApp(t, {
    env: { ...ANSWERS_ENV, ...env },
    configure: (config) => ({ ...config, alphaVantage: { ...config.alphaVantage, url: upstream.url } }),
  });
}

test('1,000 concurrent requests for one cold symbol reach the upstream exactly once', async (t) => {
  const upstream = await startCountingUpstream(t);
  const service = await serviceOn(t, upstream, {
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '5',
    ALPHA_VANTAGE_CALLS_PER_DAY: '500',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '1000',
  });
  const answers = await Promise.all(Array.from({ length: 1000 }, () => ask(`${service.url}/api/provider-a/quote?symbol=IBM`)));
  assert.equal(upstream.calls.length, 1);
  assert.ok(
    answers.every((a) => a.status === 200),
    JSON.stringify(answers.find((a) => a.status !== 200)),
  );
  assert.ok(answers.every((a) => a.cache === 'MISS' || a.cache === 'HIT'));
  const again = await ask(`${service.url}/api/provider-a/quote?symbol=IBM`);
  assert.equal(again.cache, 'HIT');
  assert.equal(upstream.calls.length, 1);
});

test('a burst of distinct symbols from one caller: the upstream sees at most the minute budget less the calls kept for others; the rest are stale or 429 with Retry-After', async (t) => {
  const upstream = await startCountingUpstream(t);
  const service = await serviceOn(t, upstream, {
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '4',
    ALPHA_VANTAGE_CALLS_PER_DAY: '500',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '200',
    CACHE_QUOTE_FRESH_SECONDS: '1',
  });
  const warm = SYMBOLS.slice(0, 2);
  for (const symbol of warm) assert.equal((await ask(`${service.url}/api/provider-a/quote?symbol=${symbol}`)).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 1_100));

  const burst = [...warm, ...SYMBOLS.slice(2, 32)];
  const answers = await Promise.all(burst.map((symbol) => ask(`${service.url}/api/provider-a/quote?symbol=${symbol}`)));
  const finishedAt = Date.now();
  // One caller alone: BUDGET_RESERVE (a quarter, rounded down: 1 of 4) is kept for callers below their share.
  assert.ok(upstream.calls.length <= 3, `upstream saw ${upstream.calls.length} calls`);
  assert.equal(maxInWindow(upstream.calls, 60_000), upstream.calls.length);
  for (const [i, answer] of answers.entries()) {
    if (i < warm.length) {
      assert.equal(answer.status, 200, 'a warm symbol is served');
      assert.equal(answer.cache, 'STALE');
      continue;
    }
    assert.ok(answer.status === 200 || answer.status === 429, `status ${answer.status}`);
    if (answer.status === 429) {
      assert.equal(answer.code, 'CALLER_SHARE_SPENT');
      // This caller's share returns one minute (counted with its 2 % margin) after the oldest call of the window.
      const expected = Math.ceil(((upstream.calls[0] as number) + 61_200 - finishedAt) / 1000);
      assert.ok(
        answer.retryAfter !== undefined && Math.abs(answer.retryAfter - expected) <= 2,
        `Retry-After ${answer.retryAfter}, expected about ${expected}`,
      );
    }
  }
  assert.ok(answers.filter((a) => a.status === 429).length >= burst.length - 3 - warm.length);
  const status = (await service.get('/api/system/status')).body as {
    upstreams: { id: string; budget: { usedMinute: number; leftMinute: number; share: { minute: unknown } } | null }[];
  };
  const providerA = status.upstreams.find((u) => u.budget !== null && u.budget.usedMinute > 0);
  assert.equal(providerA?.budget?.leftMinute, 1, 'the call kept for others is left');
  assert.deepEqual(providerA?.budget?.share.minute, { limit: 4, reserved: 1, callers: 1, held: 1 });
});

test("a drop-in client's mix over one key (quotes, fundamentals, FX, news): one minute budget; every answer 200 or 429", async (t) => {
  const upstream = await startCountingUpstream(t);
  const service = await serviceOn(t, upstream, {
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '4',
    ALPHA_VANTAGE_CALLS_PER_DAY: '500',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '300',
  });
  const query = (params: string) => `${service.url}/api/provider-a/query?${params}&apikey=caller-key`;
  const FROM = ['EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'CNY', 'INR', 'HKD', 'EUR'];
  const mix = SYMBOLS.slice(0, 10).flatMap((symbol, i) => [
    query(`function=GLOBAL_QUOTE&symbol=${symbol}`),
    query(`function=OVERVIEW&symbol=${symbol}`),
    query(`function=CURRENCY_EXCHANGE_RATE&from_currency=${FROM[i]}&to_currency=${i === 9 ? 'JPY' : 'USD'}`),
    query(`function=NEWS_SENTIMENT&tickers=${symbol}`),
  ]);
  // Each request twice, at once: the second of a pair shares the first's call (single flight).
  const answers = await Promise.all([...mix, ...mix].map((url) => ask(url)));
  // One caller: 3 of the 4, the last kept for callers below their share.
  assert.ok(upstream.calls.length <= 3, `upstream saw ${upstream.calls.length} calls`);
  assert.equal(maxInWindow(upstream.calls, 60_000), upstream.calls.length);
  for (const answer of answers) {
    assert.ok(answer.status === 200 || answer.status === 429, `status ${answer.status} ${answer.message}`);
    if (answer.status === 429) assert.equal(answer.code, 'CALLER_SHARE_SPENT');
  }
  assert.equal(answers.filter((a) => a.status === 200).length, 2 * upstream.calls.length, 'each call answers both requests that share it');
});

test('the day budget: the upstream never sees more than the day cap, and 429 says when it returns', async (t) => {
  const upstream = await startCountingUpstream(t);
  const service = await serviceOn(t, upstream, {
    ALPHA_VANTAGE_CALLS_PER_MINUTE: '0',
    ALPHA_VANTAGE_CALLS_PER_DAY: '3',
    ALPHA_VANTAGE_MIN_INTERVAL_MS: '0',
  });
  const answers = await Promise.all(SYMBOLS.slice(0, 12).map((symbol) => ask(`${service.url}/api/provider-a/quote?symbol=${symbol}`)));
  assert.equal(upstream.calls.length, 3);
  assert.equal(answers.filter((a) => a.status === 200).length, 3);
  for (const answer of answers.filter((a) => a.status !== 200)) {
    assert.equal(answer.status, 429);
    assert.equal(answer.code, 'QUOTA_EXHAUSTED');
    // Users read the upstream's public name, never its id in code.
    assert.match(answer.message ?? '', /^Alpha Vantage call budget is spent; it returns in \d+ s$/);
    assert.ok(answer.retryAfter! > 86_000 && answer.retryAfter! <= 86_402, `Retry-After ${answer.retryAfter}`);
  }
});

test('an upstream limit body is never cached and makes the guard back off', async (t) => {
  // This simulator enforces its own 1-per-second burst limit; our spacing is off, so the second call is refused upstream.
  const { createAlphaVantageSimulator } = await import('../../src/sandbox/alpha-vantage/alpha-vantage-simulator.js');
  const { SANDBOX_CREDENTIALS } = await import('../../src/sandbox/index.js');
  const sim = createAlphaVantageSimulator({
    validKeys: [SANDBOX_CREDENTIALS.alphaVantageKey],
    callsPerMinute: 0,
    callsPerDay: 0,
    burstPerSecond: 1,
  });
  await sim.listen();
  t.after(() => sim.close());
  const service = await startApp(t, {
    env: { ...ANSWERS_ENV, ALPHA_VANTAGE_CALLS_PER_MINUTE: '100', ALPHA_VANTAGE_CALLS_PER_DAY: '1000', ALPHA_VANTAGE_MIN_INTERVAL_MS: '0' },
    configure: (config) => ({ ...config, alphaVantage: { ...config.alphaVantage, url: `${sim.origin}/query` } }),
  });
  assert.equal((await ask(`${service.url}/api/provider-a/quote?symbol=AAPL`)).status, 200);
  const refused = await ask(`${service.url}/api/provider-a/quote?symbol=MSFT`);
  assert.equal(refused.status, 429);
  assert.equal(refused.code, 'QUOTA_EXHAUSTED');
  const refusedAt = Date.now();
  const arrivals: number[] = [];
  sim.on('request', () => arrivals.push(Date.now()));
  // Backed off (2 s for a burst notice): the next miss waits out the back-off before it is sent, and
  // the refusal was not cached, so it is a real MISS.
  const next = await ask(`${service.url}/api/provider-a/quote?symbol=MSFT`);
  assert.equal(next.status, 200);
  assert.equal(next.cache, 'MISS');
  assert.equal(arrivals.length, 1);
  assert.ok((arrivals[0] as number) - refusedAt >= 1_900, `sent ${(arrivals[0] as number) - refusedAt} ms after the refusal`);
});
