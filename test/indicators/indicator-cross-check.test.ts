// Our indicator maths (src/indicators/, what the simulator and the Yahoo fallback serve) against
// independent implementations from the npm registry, on the same random bars. Alpha Vantage computes
// with TA-Lib, and where definitions differ we follow TA-Lib and build the reference accordingly (see
// reference-indicators.ts):
//  - EMA seeding: TA-Lib seeds with the SMA of the first n values (so do we); libraries that seed with the
//    first value converge geometrically, so values are compared after a run-in of 200+ bars, as served.
//  - RSI, ATR, ADX and ±DI/±DM use Wilder smoothing (α = 1/n), as TA-Lib; CMO too (TA-Lib's, not Chande's).
//  - MACD's signal is an EMA(9) of the MACD line, seeded with its SMA; TRIX divides by the previous value.
//  - OBV starts at the first bar's volume; SAR takes its first direction from −DM and clamps the stop to
//    the last two bars on a reversal (TA_SAR), which neither library does: see the SAR test below.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { computeIndicator, type OhlcvBar } from '../../src/indicators/compute-indicator.js';
import { sar } from '../../src/indicators/indicator-math.js';
import type { IndicatorParams } from '../../src/indicators/indicator-params.js';
import { warmup } from '../../src/indicators/technical-body.js';
import { barHistory } from '../../src/sandbox/alpha-vantage/bar-history.js';
import { INDICATORS, INTERVALS, indicatorSpec } from '../../src/wire/alpha-vantage/indicators.js';
import { REFERENCES, referenceSar } from './reference-indicators.js';

/** Compared: the newest bars, after the run-in the service computes before its first served row. */
const COMPARED = 60;
/**
 * Relative to max(1, |reference|), below the 4 decimals served. Most indicators agree to 1e-10 or better;
 * the loosest are DX, ADX and ADXR against trading-signals, which seeds Wilder's sums with the mean of n
 * values where TA-Lib sums n − 1: after the service's run-in that difference is down to a few 1e-6.
 */
const TOLERANCE = 1e-5;
/** No shrinking: a counterexample holds hundreds of bars, and its first form says enough. */
const RUNS = { numRuns: 12, endOnFailure: true };

/** Indicators no npm library implements; their own tests hold them to ranges and known cycles. */
const NOT_CROSS_CHECKED: Record<string, string> = {
  HT_SINE: 'no independent implementation (HT_DCPERIOD and HT_TRENDLINE check the shared Hilbert core)',
  HT_TRENDMODE: 'no independent implementation (built on HT_SINE, HT_DCPERIOD and HT_TRENDLINE)',
  HT_DCPHASE: 'no independent implementation (built on HT_DCPERIOD)',
  HT_PHASOR: 'no independent implementation (the in-phase and quadrature parts of the Hilbert core)',
  SAR: 'cross-checked reversal by reversal (below)',
};

/**
 * A random walk of bars: positive prices, high ≥ open and close ≥ low, every bar with some range, move
 * and volume. Flat stretches are left out on purpose: there indicators divide 0 by 0, and each library
 * picks its own convention (our own tests pin ours).
 */
export const walkArb = (length: number) =>
  fc
    .record({
      start: fc.double({ min: 5, max: 2_000, noNaN: true }),
      steps: fc.array(
        fc.record({
          move: fc.double({ min: 0.0005, max: 0.04, noNaN: true }),
          down: fc.boolean(),
          openAt: fc.double({ min: 0, max: 1, noNaN: true }),
          wickUp: fc.double({ min: 0.0005, max: 0.02, noNaN: true }),
          wickDown: fc.double({ min: 0.0005, max: 0.02, noNaN: true }),
          volume: fc.integer({ min: 100, max: 50_000_000 }),
        }),
        { minLength: length, maxLength: length },
      ),
    })
    .map(({ start, steps }) => {
      let close = start;
      return steps.map((s): OhlcvBar => {
        const previous = close;
        close = Math.max(0.01, previous * (1 + (s.down ? -s.move : s.move)));
        const open = previous + s.openAt * (close - previous);
        const high = Math.max(open, close) * (1 + s.wickUp);
        const low = Math.min(open, close) * (1 - s.wickDown);
        return { open, high, low, close, volume: s.volume };
      });
    });

const DEFAULT_EXTRA: Record<string, number> = {
  fastperiod: 12,
  slowperiod: 26,
  signalperiod: 9,
  nbdevup: 2,
  nbdevdn: 2,
  matype: 0,
  fastkperiod: 5,
  slowkperiod: 3,
  slowdperiod: 3,
  slowkmatype: 0,
  slowdmatype: 0,
  timeperiod1: 7,
  timeperiod2: 14,
  timeperiod3: 28,
  acceleration: 0.01,
  maximum: 0.2,
};

export function paramsFor(fn: string, timePeriod: number): IndicatorParams {
  const spec = indicatorSpec(fn);
  assert.ok(spec !== undefined, fn);
  const extra = fn === 'ADOSC' ? { ...DEFAULT_EXTRA, fastperiod: 3, slowperiod: 10 } : DEFAULT_EXTRA;
  return {
    interval: 'daily',
    timePeriod: spec.timePeriod === null ? null : timePeriod,
    seriesType: spec.seriesType ? 'close' : null,
    extra,
  };
}

/** A period, and as many bars as the service computes for it: its run-in, then the compared rows. */
function periodAndBars(fn: string): fc.Arbitrary<[number, OhlcvBar[]]> {
  return fc
    .integer({ min: 5, max: 30 })
    .chain((n) => walkArb(warmup(paramsFor(fn, n)) + COMPARED).map((bars): [number, OhlcvBar[]] => [n, bars]));
}

/** The largest relative difference over the compared bars; fails when either side has no value there. */
export function largestDifference(ours: readonly number[], theirs: readonly number[], from: number): number {
  let worst = 0;
  for (let i = from; i < ours.length; i += 1) {
    const a = ours[i] as number;
    const b = theirs[i] as number;
    assert.ok(Number.isFinite(a) && Number.isFinite(b), `bar ${i}: ours ${a}, reference ${b}`);
    worst = Math.max(worst, Math.abs(a - b) / Math.max(1, Math.abs(b)));
  }
  return worst;
}

describe('indicator maths against independent implementations', () => {
  test('every indicator the service lists is cross-checked, or says why not', () => {
    for (const fn of INDICATORS) assert.ok(REFERENCES[fn] !== undefined || NOT_CROSS_CHECKED[fn] !== undefined, `${fn} has no reference`);
  });

  for (const [fn, reference] of Object.entries(REFERENCES)) {
    test(`${fn} agrees with ${reference.source}`, (t) => {
      let worst = 0;
      fc.assert(
        fc.property(periodAndBars(fn), ([n, bars]) => {
          const ours = computeIndicator(fn, bars, paramsFor(fn, n));
          for (const [key, theirs] of Object.entries(reference.compute(bars, n))) {
            const difference = largestDifference(ours[key] ?? [], theirs, bars.length - COMPARED);
            assert.ok(difference <= TOLERANCE, `${fn} ${key}: relative difference ${difference} (period ${n})`);
            worst = Math.max(worst, difference);
          }
        }),
        RUNS,
      );
      t.diagnostic(`largest relative difference ${worst.toExponential(2)}`);
    });
  }

  test('SAR: equal to trading-signals PSAR on most bars, and a stop on the right side of every bar', (t) => {
    let equal = 0;
    let compared = 0;
    fc.assert(
      fc.property(walkArb(300), (bars) => {
        const high = bars.map((b) => b.high);
        const low = bars.map((b) => b.low);
        const ours = sar(high, low, 0.02, 0.2);
        const theirs = referenceSar(high, low, 0.02, 0.2);
        for (let i = 2; i < bars.length; i += 1) {
          const stop = ours[i] as number;
          // Long: the stop sits at or below the bar's low, short: at or above its high (a stop the bar
          // touches reverses the position on that bar, at the previous trend's extreme).
          const long = stop <= (low[i] as number);
          assert.ok(long || stop >= (high[i] as number), `bar ${i}: stop ${stop} inside ${low[i]}..${high[i]}`);
          compared += 1;
          if (Math.abs(stop - (theirs[i] as number)) <= 1e-9 * Math.max(1, stop)) equal += 1;
        }
      }),
      { ...RUNS, numRuns: 30 },
    );
    // trading-signals clamps the next stop to the previous bar only when the bar is not already through
    // it, and seeds the first direction from median prices; TA-Lib always clamps to the last two bars.
    // Each difference ends at the next reversal that both make on the same bar, so most bars agree exactly.
    assert.ok(equal / compared > 0.6, `only ${equal} of ${compared} stops agree`);
    t.diagnostic(`${equal} of ${compared} stops equal to 1e-9 (${((100 * equal) / compared).toFixed(1)} %)`);
  });
});

describe('on the bars the service computes from, at every interval', () => {
  // The simulator's bar histories (intraday in the extended session, weekly and monthly built from days):
  // the same comparison on series shaped like real ones, one per interval Alpha Vantage offers.
  for (const interval of INTERVALS) {
    test(`${interval}: every cross-checked indicator agrees`, (t) => {
      const n = 14;
      let worst = 0;
      for (const [fn, reference] of Object.entries(REFERENCES)) {
        const params = { ...paramsFor(fn, n), interval };
        const bars = barHistory('IBM', interval, Date.UTC(2026, 10, 20, 18), warmup(params) + COMPARED).slice(-(warmup(params) + COMPARED));
        const ours = computeIndicator(fn, bars, params);
        for (const [key, theirs] of Object.entries(reference.compute(bars, n))) {
          const difference = largestDifference(ours[key] ?? [], theirs, bars.length - COMPARED);
          assert.ok(difference <= TOLERANCE, `${fn} ${key} at ${interval}: relative difference ${difference}`);
          worst = Math.max(worst, difference);
        }
      }
      t.diagnostic(`${Object.keys(REFERENCES).length} indicators, largest relative difference ${worst.toExponential(2)}`);
    });
  }
});
