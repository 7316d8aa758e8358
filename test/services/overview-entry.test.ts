import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mapLimit } from '../../src/services/concurrency-limit.js';
import { fixed2, formatEntry } from '../../src/services/overview-entry.js';

describe('formatEntry', () => {
  const freshness = { kind: 'end-of-day' as const, asOf: '2024-05-10T20:00:00.000Z', market: 'closed' as const };
  const base = {
    symbol: '^GSPC',
    currency: 'USD',
    name: 'S&P 500',
    category: 'index' as const,
    asOf: '2024-05-10T20:00:00.000Z',
    freshness,
  };

  it('formats price, change and percent against the previous close as toFixed(2) strings', () => {
    assert.deepEqual(formatEntry({ ...base, price: 5222.68, previousClose: 5214.08 }), {
      price: '5222.68',
      change: '8.60',
      changePercent: '0.16%',
      name: 'S&P 500',
      category: 'index',
      currency: 'USD',
      asOf: base.asOf,
      freshness,
    });
    const down = formatEntry({ ...base, price: 12.55, previousClose: 12.69 });
    assert.equal(down.change, '-0.14');
    assert.equal(down.changePercent, '-1.10%');
  });

  it('never shows "-0.00", and survives a zero previous close', () => {
    assert.equal(formatEntry({ ...base, price: 100.001, previousClose: 100.002 }).change, '0.00');
    assert.equal(formatEntry({ ...base, price: 1, previousClose: 0 }).changePercent, '0.00%');
    assert.equal(fixed2(-0.004), '0.00');
    assert.equal(fixed2(-0.005001), '-0.01');
  });

  it('leaves out name and currency the source does not know', () => {
    const entry = formatEntry({ ...base, name: null, currency: null, price: 1, previousClose: 1 });
    assert.deepEqual(Object.keys(entry), ['price', 'change', 'changePercent', 'category', 'asOf', 'freshness']);
  });
});

describe('mapLimit', () => {
  it('keeps order and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0, 6], 3, async (n) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      return n * 2;
    });
    assert.deepEqual(out, [10, 2, 8, 4, 6, 0, 12]);
    assert.equal(peak, 3);
    assert.deepEqual(await mapLimit([], 4, async () => 1), []);
  });
});
