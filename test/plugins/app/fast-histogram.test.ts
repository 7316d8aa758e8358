import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { FastHistogram } from '../../../src/plugins/app/fast-histogram.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];

/** The same observations through prom-client's own Histogram and through FastHistogram. */
async function bothScraped(observations: [string, number][]): Promise<[string, string]> {
  const reference = new Registry();
  const theirs = new Histogram({ name: 'h', help: 'help', labelNames: ['route'], buckets: BOUNDS, registers: [reference] });
  const fast = new Registry();
  const ours = new FastHistogram('h', 'help', ['route'], BOUNDS, fast);
  const series = new Map<string, ReturnType<FastHistogram['createSeries']>>();
  for (const [route, value] of observations) {
    theirs.labels(route).observe(value);
    if (!series.has(route)) series.set(route, ours.createSeries({ route }));
    ours.observe(series.get(route)!, value);
  }
  return [await fast.metrics(), await reference.metrics()];
}

test('scrapes exactly as prom-client’s Histogram does, bounds inclusive and +Inf included', async () => {
  const [ours, theirs] = await bothScraped([
    ['/a', 0.001],
    ['/a', 0.0005],
    ['/a', 0.5],
    ['/b', 7],
    ['/a', 1],
  ]);
  assert.equal(ours, theirs);
  assert.match(ours, /^h_bucket\{le="0\.001",route="\/a"\} 2$/m);
  assert.match(ours, /^h_bucket\{le="\+Inf",route="\/b"\} 1$/m);
});

test('matches prom-client for any observations', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom('/a', '/b', '/c'), fc.double({ min: 0, max: 10, noNaN: true })), { maxLength: 50 }),
      async (observations) => {
        const [ours, theirs] = await bothScraped(observations);
        assert.equal(ours, theirs);
      },
    ),
    { numRuns: 100 },
  );
});

test('reset zeroes the series that callers still hold', async () => {
  const registry = new Registry();
  const histogram = new FastHistogram('h', 'help', ['route'], BOUNDS, registry);
  const series = histogram.createSeries({ route: '/a' });
  histogram.observe(series, 0.5);
  registry.resetMetrics();
  histogram.observe(series, 0.05);
  const text = await registry.metrics();
  assert.match(text, /^h_count\{route="\/a"\} 1$/m);
  assert.match(text, /^h_bucket\{le="0\.1",route="\/a"\} 1$/m);
  assert.match(text, /^h_sum\{route="\/a"\} 0\.05$/m);
});
