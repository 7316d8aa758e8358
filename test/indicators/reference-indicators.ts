// Independent implementations of the indicators the service lists, from the npm registry (trading-signals,
// technicalindicators), wrapped to the shape of our own module: one series per output, the input's
// length, NaN where the library gives no value yet. The cross-check test compares the two.
import * as ti from 'technicalindicators';
import * as ts from 'trading-signals';
import type { OhlcvBar } from '../../src/indicators/compute-indicator.js';

type Outputs = Record<string, number[]>;
type Streaming<I, R> = { update(input: I, replace: boolean): R | null };

/** Feeds every input to a streaming indicator and keeps one number per bar (NaN while it has none). */
function stream<I, R>(indicator: Streaming<I, R>, inputs: readonly I[], pick: (r: R) => number): number[] {
  return inputs.map((input) => {
    const r = indicator.update(input, false);
    return r === null || r === undefined ? Number.NaN : pick(r);
  });
}

/** Several outputs of one streaming indicator, by our output names. */
function streamMany<I, R>(indicator: Streaming<I, R>, inputs: readonly I[], picks: Record<string, (r: R) => number>): Outputs {
  const rows = inputs.map((input) => indicator.update(input, false));
  return Object.fromEntries(
    Object.entries(picks).map(([name, pick]) => [name, rows.map((r) => (r === null || r === undefined ? Number.NaN : pick(r)))]),
  );
}

const num = (r: number | { toNumber?: () => number }) => (typeof r === 'number' ? r : Number(r));

/** technicalindicators returns only the defined values; they end at the last bar. */
function alignEnd(length: number, values: readonly number[]): number[] {
  return [...new Array<number>(length - values.length).fill(Number.NaN), ...values];
}

export interface Reference {
  /** Which library, and what (if anything) is derived on top of it. */
  source: string;
  compute(bars: readonly OhlcvBar[], n: number): Outputs;
}

const closes = (bars: readonly OhlcvBar[]) => bars.map((b) => b.close);

export const REFERENCES: Record<string, Reference> = {
  SMA: { source: 'trading-signals SMA', compute: (b, n) => ({ SMA: stream(new ts.SMA(n), closes(b), num) }) },
  EMA: { source: 'trading-signals EMA', compute: (b, n) => ({ EMA: stream(new ts.EMA(n), closes(b), num) }) },
  WMA: { source: 'trading-signals WMA', compute: (b, n) => ({ WMA: stream(new ts.WMA(n), closes(b), num) }) },
  DEMA: { source: 'trading-signals DEMA', compute: (b, n) => ({ DEMA: stream(new ts.DEMA(n), closes(b), num) }) },
  TEMA: { source: 'trading-signals TEMA', compute: (b, n) => ({ TEMA: stream(new ts.TEMA(n), closes(b), num) }) },
  TRIMA: { source: 'trading-signals TRIMA', compute: (b, n) => ({ TRIMA: stream(new ts.TRIMA(n), closes(b), num) }) },
  KAMA: { source: 'trading-signals KAMA', compute: (b, n) => ({ KAMA: stream(new ts.KAMA(n), closes(b), num) }) },
  T3: { source: 'trading-signals T3 (vFactor 0.7)', compute: (b, n) => ({ T3: stream(new ts.T3(n, 0.7), closes(b), num) }) },
  RSI: { source: 'trading-signals RSI (Wilder smoothing)', compute: (b, n) => ({ RSI: stream(new ts.RSI(n), closes(b), num) }) },
  MOM: { source: 'trading-signals MOM', compute: (b, n) => ({ MOM: stream(new ts.MOM(n), closes(b), num) }) },
  // TA-Lib (and so Alpha Vantage) smooths CMO's gains and losses the Wilder way, as for RSI; Chande's
  // original, which trading-signals' CMO follows, sums them over the window. With Wilder smoothing
  // CMO = 2·RSI − 100 exactly, so the reference is built from the independent RSI.
  CMO: {
    source: 'trading-signals RSI, as 2·RSI − 100 (Wilder-smoothed CMO)',
    compute: (b, n) => ({ CMO: stream(new ts.RSI(n), closes(b), (r) => 2 * num(r) - 100) }),
  },
  ROC: {
    source: 'technicalindicators ROC',
    compute: (b, n) => ({ ROC: alignEnd(b.length, ti.ROC.calculate({ period: n, values: closes(b) })) }),
  },
  ROCR: {
    source: 'technicalindicators ROC, as a ratio (1 + ROC/100)',
    compute: (b, n) => ({
      ROCR: alignEnd(
        b.length,
        ti.ROC.calculate({ period: n, values: closes(b) }).map((v) => 1 + v / 100),
      ),
    }),
  },
  // TA-Lib's TRIX is the one-bar ROC of the triple EMA (divided by the previous value); trading-signals
  // divides by the current one, technicalindicators by the previous one, as TA-Lib does.
  TRIX: {
    source: 'technicalindicators TRIX',
    compute: (b, n) => ({ TRIX: alignEnd(b.length, ti.TRIX.calculate({ period: n, values: closes(b) })) }),
  },
  MIDPOINT: {
    source: 'technicalindicators Highest and Lowest',
    compute: (b, n) => {
      const hi = ti.Highest.calculate({ period: n, values: closes(b) });
      const lo = ti.Lowest.calculate({ period: n, values: closes(b) });
      return {
        MIDPOINT: alignEnd(
          b.length,
          hi.map((h, i) => (h + (lo[i] as number)) / 2),
        ),
      };
    },
  },
  MACD: {
    source: 'trading-signals MACD (three EMAs)',
    compute: (b) =>
      streamMany(new ts.MACD(new ts.EMA(12), new ts.EMA(26), new ts.EMA(9)), closes(b), {
        MACD: (r) => r.macd,
        MACD_Signal: (r) => r.signal,
        MACD_Hist: (r) => r.histogram,
      }),
  },
  BBANDS: {
    source: 'trading-signals BollingerBands (SMA, 2 population deviations)',
    compute: (b, n) =>
      streamMany(new ts.BollingerBands(n, 2), closes(b), {
        'Real Upper Band': (r) => r.upper,
        'Real Middle Band': (r) => r.middle,
        'Real Lower Band': (r) => r.lower,
      }),
  },
  HT_TRENDLINE: { source: 'trading-signals HTTrendline', compute: (b) => ({ HT_TRENDLINE: stream(new ts.HTTrendline(), closes(b), num) }) },
  HT_DCPERIOD: {
    source: "trading-signals HTTrendline's smoothed dominant cycle period",
    compute: (b) => ({ DCPERIOD: dominantCycle(closes(b)) }),
  },
  ADX: { source: 'trading-signals ADX', compute: (b, n) => ({ ADX: stream(new ts.ADX(n), b, num) }) },
  ADXR: { source: 'trading-signals ADXR', compute: (b, n) => ({ ADXR: stream(new ts.ADXR(n), b, num) }) },
  DX: { source: 'trading-signals DX', compute: (b, n) => ({ DX: stream(new ts.DX(n), b, num) }) },
  PLUS_DI: {
    source: 'technicalindicators ADX (pdi)',
    compute: (b, n) => ({
      PLUS_DI: alignEnd(
        b.length,
        adxLines(b, n).map((r) => r.pdi),
      ),
    }),
  },
  MINUS_DI: {
    source: 'technicalindicators ADX (mdi)',
    compute: (b, n) => ({
      MINUS_DI: alignEnd(
        b.length,
        adxLines(b, n).map((r) => r.mdi),
      ),
    }),
  },
  // TA-Lib's ±DM is a Wilder running sum, ±DI the ratio of two such sums (DM over true range); the
  // running sum of true ranges is n·ATR once seeded, so ±DM = ±DI/100 · n · ATR.
  PLUS_DM: {
    source: 'technicalindicators ADX (pdi) × trading-signals ATR × n',
    compute: (b, n) => ({ PLUS_DM: directionalMove(b, n, 'pdi') }),
  },
  MINUS_DM: {
    source: 'technicalindicators ADX (mdi) × trading-signals ATR × n',
    compute: (b, n) => ({ MINUS_DM: directionalMove(b, n, 'mdi') }),
  },
  CCI: { source: 'trading-signals CCI', compute: (b, n) => ({ CCI: stream(new ts.CCI(n), b, num) }) },
  ATR: { source: 'trading-signals ATR (Wilder smoothing)', compute: (b, n) => ({ ATR: stream(new ts.ATR(n), b, num) }) },
  NATR: { source: 'trading-signals NATR', compute: (b, n) => ({ NATR: stream(new ts.NATR(n), b, num) }) },
  TRANGE: { source: 'trading-signals TR', compute: (b) => ({ TRANGE: stream(new ts.TR(), b, num) }) },
  STOCH: {
    source: 'trading-signals StochasticOscillator (5, 3, 3)',
    compute: (b) =>
      streamMany(new ts.StochasticOscillator({ kPeriod: 5, kSlowingPeriod: 3, dPeriod: 3 }), b, {
        SlowK: (r) => r.stochK,
        SlowD: (r) => r.stochD,
      }),
  },
  WILLR: { source: 'trading-signals WilliamsR', compute: (b, n) => ({ WILLR: stream(new ts.WilliamsR(n), b, num) }) },
  AROON: {
    source: 'trading-signals Aroon',
    compute: (b, n) => streamMany(new ts.Aroon(n), b, { 'Aroon Up': (r) => r.aroonUp, 'Aroon Down': (r) => r.aroonDown }),
  },
  AROONOSC: {
    source: 'trading-signals Aroon (up − down)',
    compute: (b, n) => ({ AROONOSC: stream(new ts.Aroon(n), b, (x) => x.aroonUp - x.aroonDown) }),
  },
  MFI: { source: 'trading-signals MFI', compute: (b, n) => ({ MFI: stream(new ts.MFI(n), b, num) }) },
  MIDPRICE: {
    source: 'technicalindicators Highest (highs) and Lowest (lows)',
    compute: (b, n) => {
      const hi = ti.Highest.calculate({ period: n, values: b.map((x) => x.high) });
      const lo = ti.Lowest.calculate({ period: n, values: b.map((x) => x.low) });
      return {
        MIDPRICE: alignEnd(
          b.length,
          hi.map((h, i) => (h + (lo[i] as number)) / 2),
        ),
      };
    },
  },
  BOP: { source: 'trading-signals BOP', compute: (b) => ({ BOP: stream(new ts.BOP(), b, num) }) },
  AD: { source: 'trading-signals AD', compute: (b) => ({ 'Chaikin A/D': stream(new ts.AD(), b, num) }) },
  ADOSC: {
    source: 'trading-signals ADOSC (3, 10)',
    compute: (b) => ({ ADOSC: stream(new ts.ADOSC({ fastPeriod: 3, slowPeriod: 10 }), b, num) }),
  },
  // TA-Lib starts OBV at the first bar's volume; technicalindicators starts at 0 on the second bar.
  OBV: {
    source: "technicalindicators OBV, plus the first bar's volume (TA-Lib's start)",
    compute: (b) => ({
      OBV: alignEnd(
        b.length,
        ti.OBV.calculate({ close: closes(b), volume: b.map((x) => x.volume) }).map((v) => v + (b[0]?.volume ?? 0)),
      ),
    }),
  },
  ULTOSC: {
    source: 'trading-signals UltimateOscillator (7, 14, 28)',
    compute: (b) => ({ ULTOSC: stream(new ts.UltimateOscillator({ shortPeriod: 7, mediumPeriod: 14, longPeriod: 28 }), b, num) }),
  },
};

/**
 * HT_DCPERIOD is the smoothed period of the Hilbert core that HTTrendline runs; trading-signals keeps it
 * in the indicator's state (not its typed API: the version is pinned by the lockfile).
 */
function dominantCycle(x: readonly number[]): number[] {
  const trendline = new ts.HTTrendline();
  const state = (trendline as unknown as { state: { smoothPeriod: number } }).state;
  return x.map((price) => (trendline.update(price, false) === null ? Number.NaN : state.smoothPeriod));
}

function directionalMove(b: readonly OhlcvBar[], n: number, side: 'pdi' | 'mdi'): number[] {
  const di = alignEnd(
    b.length,
    adxLines(b, n).map((r) => r[side]),
  );
  const atr = stream(new ts.ATR(n), b, num);
  return di.map((d, i) => (d / 100) * n * (atr[i] as number));
}

function adxLines(b: readonly OhlcvBar[], n: number): { pdi: number; mdi: number }[] {
  return ti.ADX.calculate({ period: n, high: b.map((x) => x.high), low: b.map((x) => x.low), close: b.map((x) => x.close) });
}

/** trading-signals' parabolic SAR, bar by bar (NaN before its first stop). */
export function referenceSar(high: readonly number[], low: readonly number[], step: number, max: number): number[] {
  const psar = new ts.PSAR({ accelerationStep: step, accelerationMax: max });
  return high.map((h, i) => psar.update({ high: h, low: low[i] as number }, false) ?? Number.NaN);
}
