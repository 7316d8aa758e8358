import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import * as m from '../../src/indicators/indicator-math.js';

const defined = (x: number[]) => x.filter((v) => !Number.isNaN(v));
const linear = (n: number, from = 100) => Array.from({ length: n }, (_, i) => from + i);
const constant = (n: number, v = 50) => new Array<number>(n).fill(v);
const close = (actual: number, expected: number, eps = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= eps, `expected ${expected}, got ${actual}`);

/** Random OHLCV bars with high ≥ open, close ≥ low, as a price feed would have them. */
const barsArb = fc
  .array(
    fc.record({
      base: fc.double({ min: 1, max: 1000, noNaN: true }),
      up: fc.double({ min: 0, max: 20, noNaN: true }),
      down: fc.double({ min: 0, max: 20, noNaN: true }),
      openAt: fc.double({ min: 0, max: 1, noNaN: true }),
      closeAt: fc.double({ min: 0, max: 1, noNaN: true }),
      volume: fc.integer({ min: 100, max: 10_000_000 }),
    }),
    { minLength: 40, maxLength: 120 },
  )
  .map((rows) => {
    const high = rows.map((r) => r.base + r.up);
    const low = rows.map((r) => Math.max(0.01, r.base - r.down));
    const span = (i: number, at: number) => (low[i] as number) + at * ((high[i] as number) - (low[i] as number));
    return {
      open: rows.map((r, i) => span(i, r.openAt)),
      high,
      low,
      close: rows.map((r, i) => span(i, r.closeAt)),
      volume: rows.map((r) => r.volume),
    };
  });

const within = (values: number[], lo: number, hi: number) => {
  for (const v of defined(values)) assert.ok(v >= lo - 1e-9 && v <= hi + 1e-9, `${v} outside ${lo}..${hi}`);
};

describe('moving averages', () => {
  test('SMA of a known series', () => {
    assert.deepEqual(m.sma([1, 2, 3, 4, 5, 6], 3), [Number.NaN, Number.NaN, 2, 3, 4, 5]);
  });

  test('EMA is seeded with the SMA of its first period, then smooths with 2/(n+1)', () => {
    // seed (1+2+3)/3 = 2, k = 0.5: 2 + 0.5·(4−2) = 3, then 3 + 0.5·(10−3) = 6.5
    assert.deepEqual(m.ema([1, 2, 3, 4, 10], 3), [Number.NaN, Number.NaN, 2, 3, 6.5]);
  });

  test('WMA weights the newest value most', () => {
    close(m.wma([1, 2, 3], 3)[2] as number, (1 + 4 + 9) / 6);
  });

  test('DEMA and TEMA remove the lag of an EMA on a straight line', () => {
    const x = linear(80);
    const d = m.dema(x, 10);
    const t = m.tema(x, 10);
    for (let i = 0; i < x.length; i += 1) {
      if (!Number.isNaN(d[i] as number)) close(d[i] as number, x[i] as number, 1e-9);
      if (!Number.isNaN(t[i] as number)) close(t[i] as number, x[i] as number, 1e-9);
    }
    assert.equal(defined(d).length, 80 - 18);
    assert.equal(defined(t).length, 80 - 27);
  });

  test('TRIMA is centred like an SMA of the same length on a straight line', () => {
    for (const n of [4, 5, 9, 10]) {
      const x = linear(40);
      const tri = m.trima(x, n);
      const s = m.sma(x, n);
      for (let i = n; i < x.length; i += 1) close(tri[i] as number, s[i] as number, 1e-9);
    }
  });

  test('KAMA, T3 and every matype leave a constant series unchanged', () => {
    const x = constant(200, 42);
    for (let type = 0; type < m.MA_TYPES.length; type += 1) {
      const out = defined(m.movingAverage(type, x, 10));
      assert.ok(out.length > 0, `matype ${type} produced no values`);
      for (const v of out) close(v, 42, 1e-9);
    }
  });

  test('an unknown matype is refused', () => {
    assert.throws(() => m.movingAverage(9, [1, 2, 3], 2), RangeError);
  });
});

describe('momentum', () => {
  test('RSI follows Wilder: 50, then 75, then 37.5 on a known series', () => {
    // changes +1 −1 | +1 | −1 with n = 2: averages 0.5/0.5, then 0.75/0.25, then 0.375/0.625
    const out = m.rsi([1, 2, 1, 2, 1], 2);
    assert.deepEqual(out.slice(0, 2), [Number.NaN, Number.NaN]);
    close(out[2] as number, 50);
    close(out[3] as number, 75);
    close(out[4] as number, 37.5);
  });

  test('RSI is 100 on a rising series, 0 on a falling one and 50 on a flat one', () => {
    for (const v of defined(m.rsi(linear(30), 14))) close(v, 100);
    for (const v of defined(m.rsi(linear(30).reverse(), 14))) close(v, 0);
    for (const v of defined(m.rsi(constant(30), 14))) close(v, 50);
  });

  test('RSI stays within 0..100 and CMO within −100..100 on any series', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 10_000, noNaN: true }), { minLength: 20, maxLength: 200 }),
        fc.integer({ min: 1, max: 30 }),
        (x, n) => {
          within(m.rsi(x, n), 0, 100);
          within(m.cmo(x, n), -100, 100);
        },
      ),
    );
  });

  test('MOM, ROC, ROCR and TRIX on a known series', () => {
    const x = [10, 11, 12, 15];
    assert.deepEqual(m.mom(x, 2), [Number.NaN, Number.NaN, 2, 4]);
    close(m.roc(x, 2)[3] as number, 100 * (15 / 11 - 1));
    close(m.rocr(x, 2)[3] as number, 15 / 11);
    for (const v of defined(m.trix(constant(60), 5))) close(v, 0);
  });

  test('MIDPOINT is the middle of the window', () => {
    assert.deepEqual(m.midpoint([1, 5, 3, 9], 3), [Number.NaN, Number.NaN, 3, 6]);
  });

  test('MACD is fast EMA − slow EMA, its histogram the line minus the signal', () => {
    const x = Array.from({ length: 120 }, (_, i) => 100 + 10 * Math.sin(i / 7));
    const r = m.macd(x, 12, 26, 9);
    const fast = m.ema(x, 12);
    const slow = m.ema(x, 26);
    assert.equal(defined(r.macd).length, 120 - 25);
    assert.equal(defined(r.signal).length, 120 - 25 - 8);
    for (let i = 40; i < x.length; i += 1) {
      close(r.macd[i] as number, (fast[i] as number) - (slow[i] as number));
      close(r.hist[i] as number, (r.macd[i] as number) - (r.signal[i] as number));
    }
  });

  test('BBANDS: the SMA plus and minus k population standard deviations', () => {
    const r = m.bbands([1, 2, 3, 4, 5], 5, 2, 3, 0);
    close(r.middle[4] as number, 3);
    close(r.upper[4] as number, 3 + 2 * Math.SQRT2);
    close(r.lower[4] as number, 3 - 3 * Math.SQRT2);
  });
});

describe('Hilbert transform family', () => {
  test('HT_DCPERIOD finds the period of a pure cycle', () => {
    for (const period of [10, 20, 30]) {
      const x = Array.from({ length: 300 }, (_, i) => 100 + 5 * Math.sin((2 * Math.PI * i) / period));
      close(m.htDcPeriod(x)[299] as number, period, 0.5);
    }
  });

  test('outputs start after the 63-bar look-back and stay in their ranges', () => {
    const x = Array.from({ length: 200 }, (_, i) => 100 + 5 * Math.sin(i / 4) + i / 10);
    const sine = m.htSine(x);
    assert.ok(Number.isNaN(sine.sine[62] as number));
    assert.equal(defined(sine.sine).length, 200 - m.HT_LOOKBACK);
    within(sine.sine, -1, 1);
    within(sine.leadSine, -1, 1);
    within(m.htDcPhase(x), -45, 315);
    assert.ok(defined(m.htTrendMode(x)).every((v) => v === 0 || v === 1));
    assert.equal(defined(m.htPhasor(x).quadrature).length, 200 - m.HT_LOOKBACK);
    within(m.htDcPeriod(x), 6, 50);
  });

  test('HT_TRENDLINE follows a straight line and reports a trend', () => {
    const x = linear(200);
    const trend = m.htTrendline(x);
    assert.ok((trend[199] as number) < 299 && (trend[199] as number) > 250);
    assert.ok(
      defined(m.htTrendMode(x))
        .slice(-20)
        .every((v) => v === 1),
    );
  });
});

describe('high / low / close indicators', () => {
  test('TRANGE takes the gap from the previous close into account', () => {
    assert.deepEqual(m.trange([10, 12, 9], [8, 11, 7], [9, 11.5, 8]), [Number.NaN, 3, 4.5]);
  });

  test('ATR of bars with a constant range is that range; NATR is it in percent of the close', () => {
    const n = 40;
    const high = constant(n, 102);
    const low = constant(n, 98);
    const c = constant(n, 100);
    for (const v of defined(m.atr(high, low, c, 14))) close(v, 4);
    for (const v of defined(m.natr(high, low, c, 14))) close(v, 4);
  });

  test('a steady rise has +DM only, +DI above −DI, ADX near 100 and Aroon Up 100', () => {
    const high = linear(80, 101);
    const low = linear(80, 99);
    const c = linear(80, 100);
    for (const v of defined(m.minusDm(high, low, 14))) close(v, 0);
    assert.ok(defined(m.plusDm(high, low, 14)).every((v) => v > 0));
    const adx = defined(m.adx(high, low, c, 14));
    close(adx[adx.length - 1] as number, 100, 1e-6);
    for (const v of defined(m.aroon(high, low, 14).up)) close(v, 100);
    for (const v of defined(m.aroonOsc(high, low, 14))) close(v, 100);
    assert.ok(defined(m.plusDi(high, low, c, 14)).every((p, i) => p > (defined(m.minusDi(high, low, c, 14))[i] as number)));
  });

  test('SAR stays below the lows of a steady rise', () => {
    const high = linear(60, 101);
    const low = linear(60, 99);
    const s = m.sar(high, low, 0.02, 0.2);
    for (let i = 1; i < 60; i += 1) assert.ok((s[i] as number) < (low[i] as number));
  });

  test('OBV and the A/D line on known bars', () => {
    assert.deepEqual(m.obv([10, 11, 11, 9], [100, 200, 300, 50]), [100, 300, 300, 250]);
    // close at the high adds the whole volume, at the low subtracts it, mid-range adds nothing
    assert.deepEqual(m.ad([10, 10, 10], [8, 8, 8], [10, 8, 9], [100, 50, 70]), [100, 50, 50]);
    assert.deepEqual(m.bop([9, 10], [10, 10], [8, 10], [10, 10]), [0.5, 0]);
  });

  test('CCI is 0 on flat prices; MIDPRICE is the middle of the range', () => {
    for (const v of defined(m.cci(constant(30), constant(30), constant(30), 14))) close(v, 0);
    assert.deepEqual(m.midprice([10, 12, 11], [8, 9, 5], 2), [Number.NaN, 10, 8.5]);
  });

  test('bounded oscillators stay in range on any bars', () => {
    fc.assert(
      fc.property(barsArb, fc.integer({ min: 2, max: 20 }), (b, n) => {
        const stoch = m.stoch(b.high, b.low, b.close, 5, 3, 0, 3, 0);
        within(stoch.slowK, 0, 100);
        within(stoch.slowD, 0, 100);
        within(m.willr(b.high, b.low, b.close, n), -100, 0);
        within(m.aroon(b.high, b.low, n).up, 0, 100);
        within(m.aroon(b.high, b.low, n).down, 0, 100);
        within(m.aroonOsc(b.high, b.low, n), -100, 100);
        within(m.mfi(b.high, b.low, b.close, b.volume, n), 0, 100);
        within(m.ultosc(b.high, b.low, b.close, 7, 14, 28), 0, 100);
        within(m.adx(b.high, b.low, b.close, n), 0, 100);
        within(m.dx(b.high, b.low, b.close, n), 0, 100);
        within(m.plusDi(b.high, b.low, b.close, n), 0, 100);
        within(m.bop(b.open, b.high, b.low, b.close), -1, 1);
        assert.ok(defined(m.atr(b.high, b.low, b.close, n)).every((v) => v >= 0));
        const bands = m.bbands(b.close, n, 2, 2, 0);
        for (let i = 0; i < b.close.length; i += 1) {
          if (Number.isNaN(bands.middle[i] as number)) continue;
          assert.ok((bands.lower[i] as number) <= (bands.middle[i] as number) + 1e-9);
          assert.ok((bands.middle[i] as number) <= (bands.upper[i] as number) + 1e-9);
        }
      }),
      { numRuns: 60 },
    );
  });
});
