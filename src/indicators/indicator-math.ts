// The technical indicators Alpha Vantage serves, computed the way TA-Lib (which Alpha Vantage's values
// follow) defines them. Pure functions over oldest-first arrays; every output has the input's length and
// holds NaN where the indicator is not yet defined (its look-back), so outputs line up with the bars.

export type Series = number[];

const nanArray = (n: number): Series => new Array<number>(n).fill(Number.NaN);

/** Index of the first finite value, or the length when there is none. */
function firstFinite(x: Series): number {
  const i = x.findIndex((v) => Number.isFinite(v));
  return i === -1 ? x.length : i;
}

/** a / b, or `fallback` when b is zero (flat prices make many ratios undefined). */
function ratio(a: number, b: number, fallback = 0): number {
  return b === 0 ? fallback : a / b;
}

function highest(x: Series, from: number, to: number): number {
  let m = -Infinity;
  for (let i = from; i <= to; i += 1) m = Math.max(m, x[i] as number);
  return m;
}

function lowest(x: Series, from: number, to: number): number {
  let m = Infinity;
  for (let i = from; i <= to; i += 1) m = Math.min(m, x[i] as number);
  return m;
}

// ---- Moving averages --------------------------------------------------------------------------

export function sma(x: Series, n: number): Series {
  const out = nanArray(x.length);
  const start = firstFinite(x);
  let sum = 0;
  for (let i = start; i < x.length; i += 1) {
    sum += x[i] as number;
    if (i - start >= n) sum -= x[i - n] as number;
    if (i - start >= n - 1) out[i] = sum / n;
  }
  return out;
}

/** EMA seeded with the SMA of its first `n` values, as TA-Lib does. */
export function ema(x: Series, n: number, k = 2 / (n + 1)): Series {
  const out = nanArray(x.length);
  const start = firstFinite(x);
  if (x.length - start < n) return out;
  let prev = 0;
  for (let i = start; i < start + n; i += 1) prev += x[i] as number;
  prev /= n;
  out[start + n - 1] = prev;
  for (let i = start + n; i < x.length; i += 1) {
    prev += k * ((x[i] as number) - prev);
    out[i] = prev;
  }
  return out;
}

export function wma(x: Series, n: number): Series {
  const out = nanArray(x.length);
  const start = firstFinite(x);
  const weights = (n * (n + 1)) / 2;
  for (let i = start + n - 1; i < x.length; i += 1) {
    let sum = 0;
    for (let j = 0; j < n; j += 1) sum += (x[i - j] as number) * (n - j);
    out[i] = sum / weights;
  }
  return out;
}

export function dema(x: Series, n: number): Series {
  const e1 = ema(x, n);
  const e2 = ema(e1, n);
  return e1.map((v, i) => 2 * v - (e2[i] as number));
}

export function tema(x: Series, n: number): Series {
  const e1 = ema(x, n);
  const e2 = ema(e1, n);
  const e3 = ema(e2, n);
  return e1.map((v, i) => 3 * v - 3 * (e2[i] as number) + (e3[i] as number));
}

/** Triangular MA: an SMA of an SMA, the two periods splitting `n` as TA-Lib splits it. */
export function trima(x: Series, n: number): Series {
  const first = n % 2 === 1 ? (n + 1) / 2 : n / 2;
  const second = n % 2 === 1 ? (n + 1) / 2 : n / 2 + 1;
  return sma(sma(x, first), second);
}

/** Kaufman adaptive MA: the smoothing constant follows the efficiency ratio (fast 2, slow 30). */
export function kama(x: Series, n: number): Series {
  const out = nanArray(x.length);
  const start = firstFinite(x);
  if (x.length - start <= n) return out;
  const fast = 2 / 3;
  const slow = 2 / 31;
  let prev = x[start + n - 1] as number;
  for (let i = start + n; i < x.length; i += 1) {
    let noise = 0;
    for (let j = i - n + 1; j <= i; j += 1) noise += Math.abs((x[j] as number) - (x[j - 1] as number));
    const efficiency = ratio(Math.abs((x[i] as number) - (x[i - n] as number)), noise, 0);
    const sc = (efficiency * (fast - slow) + slow) ** 2;
    prev += sc * ((x[i] as number) - prev);
    out[i] = prev;
  }
  return out;
}

/** Tillson T3: six chained EMAs combined with the volume factor (0.7 by default). */
export function t3(x: Series, n: number, vFactor = 0.7): Series {
  const e1 = ema(x, n);
  const e2 = ema(e1, n);
  const e3 = ema(e2, n);
  const e4 = ema(e3, n);
  const e5 = ema(e4, n);
  const e6 = ema(e5, n);
  const v = vFactor;
  const c1 = -(v ** 3);
  const c2 = 3 * v ** 2 + 3 * v ** 3;
  const c3 = -6 * v ** 2 - 3 * v - 3 * v ** 3;
  const c4 = 1 + 3 * v + v ** 3 + 3 * v ** 2;
  return e6.map((v6, i) => c1 * v6 + c2 * (e5[i] as number) + c3 * (e4[i] as number) + c4 * (e3[i] as number));
}

/** Alpha Vantage's `matype` numbering (it differs from TA-Lib's after 5). */
export const MA_TYPES = ['SMA', 'EMA', 'WMA', 'DEMA', 'TEMA', 'TRIMA', 'T3', 'KAMA', 'MAMA'] as const;

export function movingAverage(maType: number, x: Series, n: number): Series {
  switch (MA_TYPES[maType]) {
    case 'SMA':
      return sma(x, n);
    case 'EMA':
      return ema(x, n);
    case 'WMA':
      return wma(x, n);
    case 'DEMA':
      return dema(x, n);
    case 'TEMA':
      return tema(x, n);
    case 'TRIMA':
      return trima(x, n);
    case 'T3':
      return t3(x, n);
    case 'KAMA':
      return kama(x, n);
    case 'MAMA':
      return mama(x).mama;
    default:
      throw new RangeError(`unknown moving average type ${maType}`);
  }
}

// ---- Momentum on one series -------------------------------------------------------------------

/** Wilder-smoothed average gain and loss over `n` changes. */
function wilderGainLoss(x: Series, n: number): { gain: Series; loss: Series } {
  const gain = nanArray(x.length);
  const loss = nanArray(x.length);
  const start = firstFinite(x);
  if (x.length - start <= n) return { gain, loss };
  let g = 0;
  let l = 0;
  for (let i = start + 1; i <= start + n; i += 1) {
    const d = (x[i] as number) - (x[i - 1] as number);
    if (d > 0) g += d;
    else l -= d;
  }
  g /= n;
  l /= n;
  gain[start + n] = g;
  loss[start + n] = l;
  for (let i = start + n + 1; i < x.length; i += 1) {
    const d = (x[i] as number) - (x[i - 1] as number);
    g = (g * (n - 1) + Math.max(d, 0)) / n;
    l = (l * (n - 1) + Math.max(-d, 0)) / n;
    gain[i] = g;
    loss[i] = l;
  }
  return { gain, loss };
}

/** Relative strength index, 0..100 (50 when prices did not move at all). */
export function rsi(x: Series, n: number): Series {
  const { gain, loss } = wilderGainLoss(x, n);
  return gain.map((g, i) => 100 * ratio(g, g + (loss[i] as number), 0.5));
}

/** Chande momentum oscillator, -100..100. */
export function cmo(x: Series, n: number): Series {
  const { gain, loss } = wilderGainLoss(x, n);
  return gain.map((g, i) => 100 * ratio(g - (loss[i] as number), g + (loss[i] as number), 0));
}

export function mom(x: Series, n: number): Series {
  return x.map((v, i) => (i >= n ? v - (x[i - n] as number) : Number.NaN));
}

export function roc(x: Series, n: number): Series {
  return x.map((v, i) => (i >= n ? 100 * (ratio(v, x[i - n] as number, 1) - 1) : Number.NaN));
}

export function rocr(x: Series, n: number): Series {
  return x.map((v, i) => (i >= n ? ratio(v, x[i - n] as number, 1) : Number.NaN));
}

/** One-bar rate of change (percent) of a triple-smoothed EMA. */
export function trix(x: Series, n: number): Series {
  const e3 = ema(ema(ema(x, n), n), n);
  return e3.map((v, i) => (i >= 1 ? 100 * (ratio(v, e3[i - 1] as number, 1) - 1) : Number.NaN));
}

export function midpoint(x: Series, n: number): Series {
  return x.map((_, i) => (i >= n - 1 ? (highest(x, i - n + 1, i) + lowest(x, i - n + 1, i)) / 2 : Number.NaN));
}

export function macd(x: Series, fast: number, slow: number, signal: number): { macd: Series; signal: Series; hist: Series } {
  const fastEma = ema(x, fast);
  const slowEma = ema(x, slow);
  // NaN until both legs are defined, so the line starts where the slower EMA does.
  const line = slowEma.map((s, i) => (fastEma[i] as number) - s);
  const signalLine = ema(line, signal);
  return { macd: line, signal: signalLine, hist: line.map((m, i) => m - (signalLine[i] as number)) };
}

/** Population standard deviation over `n` values. */
function stddev(x: Series, n: number): Series {
  const mean = sma(x, n);
  return x.map((_, i) => {
    const m = mean[i] as number;
    if (!Number.isFinite(m)) return Number.NaN;
    let sum = 0;
    for (let j = i - n + 1; j <= i; j += 1) sum += ((x[j] as number) - m) ** 2;
    return Math.sqrt(sum / n);
  });
}

export function bbands(
  x: Series,
  n: number,
  devUp: number,
  devDown: number,
  maType: number,
): { upper: Series; middle: Series; lower: Series } {
  const middle = movingAverage(maType, x, n);
  const sd = stddev(x, n);
  return {
    upper: middle.map((m, i) => m + devUp * (sd[i] as number)),
    middle,
    lower: middle.map((m, i) => m - devDown * (sd[i] as number)),
  };
}

// ---- Hilbert transform family (Ehlers, as in TA-Lib) -----------------------------------------

/** TA-Lib leaves the first 63 bars of every HT_* output undefined while the filters settle. @internal */
export const HT_LOOKBACK = 63;

interface HilbertState {
  smoothPrice: Series;
  inPhase: Series;
  quadrature: Series;
  /** Smoothed dominant cycle period, in bars. */
  period: Series;
  /** Phase of the detector (atan Q1/I1), used by MAMA. */
  detectorPhase: Series;
}

/** The shared core: smoothed price, detrender, in-phase/quadrature components, cycle period. */
function hilbert(x: Series): HilbertState {
  const len = x.length;
  const smoothPrice = new Array<number>(len).fill(0);
  const detrender = new Array<number>(len).fill(0);
  const i1 = new Array<number>(len).fill(0);
  const q1 = new Array<number>(len).fill(0);
  const period = new Array<number>(len).fill(0);
  const detectorPhase = new Array<number>(len).fill(0);
  const a = 0.0962;
  const b = 0.5769;
  const at = (s: Series, i: number) => (i >= 0 ? (s[i] as number) : 0);
  const fir = (s: Series, i: number) => a * at(s, i) + b * at(s, i - 2) - b * at(s, i - 4) - a * at(s, i - 6);
  let prevI2 = 0;
  let prevQ2 = 0;
  let re = 0;
  let im = 0;
  let prevPeriod = 0;
  let smoothPeriod = 0;
  const smooth = new Array<number>(len).fill(0);
  for (let i = 0; i < len; i += 1) {
    smoothPrice[i] = (4 * at(x, i) + 3 * at(x, i - 1) + 2 * at(x, i - 2) + at(x, i - 3)) / 10;
    const adjust = 0.075 * prevPeriod + 0.54;
    detrender[i] = fir(smoothPrice, i) * adjust;
    q1[i] = fir(detrender, i) * adjust;
    i1[i] = at(detrender, i - 3);
    const jI = fir(i1, i) * adjust;
    const jQ = fir(q1, i) * adjust;
    let i2 = (i1[i] as number) - jQ;
    let q2 = (q1[i] as number) + jI;
    i2 = 0.2 * i2 + 0.8 * prevI2;
    q2 = 0.2 * q2 + 0.8 * prevQ2;
    re = 0.2 * (i2 * prevI2 + q2 * prevQ2) + 0.8 * re;
    im = 0.2 * (i2 * prevQ2 - q2 * prevI2) + 0.8 * im;
    prevI2 = i2;
    prevQ2 = q2;
    let p = prevPeriod;
    if (im !== 0 && re !== 0) p = 360 / ((Math.atan(im / re) * 180) / Math.PI);
    p = Math.min(p, 1.5 * prevPeriod || p);
    p = Math.max(p, 0.67 * prevPeriod);
    p = Math.min(Math.max(p, 6), 50);
    p = 0.2 * p + 0.8 * prevPeriod;
    prevPeriod = p;
    smoothPeriod = 0.33 * p + 0.67 * smoothPeriod;
    period[i] = p;
    smooth[i] = smoothPeriod;
    detectorPhase[i] = i1[i] !== 0 ? (Math.atan((q1[i] as number) / (i1[i] as number)) * 180) / Math.PI : 0;
  }
  return { smoothPrice, inPhase: i1, quadrature: q1, period: smooth, detectorPhase };
}

function maskLookback(values: Series, lookback = HT_LOOKBACK): Series {
  return values.map((v, i) => (i < lookback ? Number.NaN : v));
}

export function htDcPeriod(x: Series): Series {
  return maskLookback(hilbert(x).period);
}

export function htPhasor(x: Series): { phase: Series; quadrature: Series } {
  const h = hilbert(x);
  return { phase: maskLookback(h.inPhase), quadrature: maskLookback(h.quadrature) };
}

/** Dominant cycle phase in degrees, -45..315 as TA-Lib folds it. */
function dcPhaseRaw(h: HilbertState): Series {
  return h.smoothPrice.map((_, i) => {
    const periodInt = Math.max(1, Math.floor((h.period[i] as number) + 0.5));
    let real = 0;
    let imag = 0;
    for (let k = 0; k < periodInt && i - k >= 0; k += 1) {
      const angle = (2 * Math.PI * k) / periodInt;
      real += Math.sin(angle) * (h.smoothPrice[i - k] as number);
      imag += Math.cos(angle) * (h.smoothPrice[i - k] as number);
    }
    let phase = Math.abs(imag) > 0 ? (Math.atan(real / imag) * 180) / Math.PI : real >= 0 ? 90 : -90;
    phase += 90;
    phase += 360 / Math.max(h.period[i] as number, 1);
    if (imag < 0) phase += 180;
    if (phase > 315) phase -= 360;
    return phase;
  });
}

export function htDcPhase(x: Series): Series {
  return maskLookback(dcPhaseRaw(hilbert(x)));
}

export function htSine(x: Series): { sine: Series; leadSine: Series } {
  const phase = dcPhaseRaw(hilbert(x));
  const rad = Math.PI / 180;
  return {
    sine: maskLookback(phase.map((p) => Math.sin(p * rad))),
    leadSine: maskLookback(phase.map((p) => Math.sin((p + 45) * rad))),
  };
}

function trendlineRaw(x: Series, h: HilbertState): Series {
  const instantaneous = x.map((_, i) => {
    const periodInt = Math.max(1, Math.floor((h.period[i] as number) + 0.5));
    let sum = 0;
    let count = 0;
    for (let k = 0; k < periodInt && i - k >= 0; k += 1) {
      sum += x[i - k] as number;
      count += 1;
    }
    return sum / count;
  });
  const at = (i: number) => instantaneous[Math.max(i, 0)] as number;
  return instantaneous.map((_, i) => (4 * at(i) + 3 * at(i - 1) + 2 * at(i - 2) + at(i - 3)) / 10);
}

export function htTrendline(x: Series): Series {
  return maskLookback(trendlineRaw(x, hilbert(x)));
}

/** 1 while the market trends, 0 while it cycles. */
export function htTrendMode(x: Series): Series {
  const h = hilbert(x);
  const phase = dcPhaseRaw(h);
  const trendline = trendlineRaw(x, h);
  const rad = Math.PI / 180;
  let daysInTrend = 0;
  return maskLookback(
    phase.map((p, i) => {
      const period = Math.max(h.period[i] as number, 1);
      const prevP = i > 0 ? (phase[i - 1] as number) : p;
      const sine = Math.sin(p * rad);
      const lead = Math.sin((p + 45) * rad);
      const prevSine = Math.sin(prevP * rad);
      const prevLead = Math.sin((prevP + 45) * rad);
      let trend = 1;
      const crossed = (sine > lead && prevSine <= prevLead) || (sine < lead && prevSine >= prevLead);
      daysInTrend = crossed ? 0 : daysInTrend + 1;
      if (daysInTrend < 0.5 * period) trend = 0;
      const change = p - prevP;
      if (period !== 0 && change > (0.67 * 360) / period && change < (1.5 * 360) / period) trend = 0;
      const tl = trendline[i] as number;
      if (tl !== 0 && Math.abs(((h.smoothPrice[i] as number) - tl) / tl) >= 0.015) trend = 1;
      return trend;
    }),
  );
}

/** MESA adaptive moving average and its follower (fast limit 0.5, slow limit 0.05 for `matype=8`). */
export function mama(x: Series, fastLimit = 0.5, slowLimit = 0.05): { mama: Series; fama: Series } {
  const h = hilbert(x);
  const outMama = nanArray(x.length);
  const outFama = nanArray(x.length);
  let m = x[0] ?? 0;
  let f = m;
  let prevPhase = 0;
  for (let i = 0; i < x.length; i += 1) {
    const phase = h.detectorPhase[i] as number;
    const delta = Math.max(prevPhase - phase, 1);
    prevPhase = phase;
    const alpha = Math.max(fastLimit / delta, slowLimit);
    m = alpha * (x[i] as number) + (1 - alpha) * m;
    f = 0.5 * alpha * m + (1 - 0.5 * alpha) * f;
    if (i >= 32) {
      outMama[i] = m;
      outFama[i] = f;
    }
  }
  return { mama: outMama, fama: outFama };
}

// ---- High / low / close based ---------------------------------------------------------------

export function trange(high: Series, low: Series, close: Series): Series {
  return high.map((h, i) => {
    if (i === 0) return Number.NaN;
    const l = low[i] as number;
    const pc = close[i - 1] as number;
    return Math.max(h - l, Math.abs(h - pc), Math.abs(l - pc));
  });
}

/** Wilder's average: the mean of the first `n` defined values, then (prev·(n−1) + v)/n. */
function wilderAverage(x: Series, n: number): Series {
  const out = nanArray(x.length);
  const start = firstFinite(x);
  if (x.length - start < n) return out;
  let prev = 0;
  for (let i = start; i < start + n; i += 1) prev += x[i] as number;
  prev /= n;
  out[start + n - 1] = prev;
  for (let i = start + n; i < x.length; i += 1) {
    prev = (prev * (n - 1) + (x[i] as number)) / n;
    out[i] = prev;
  }
  return out;
}

/**
 * Wilder's running sum as TA-Lib seeds it: the plain sum of the first n−1 defined values, then
 * prev − prev/n + v for every value after. (Seeding with n values instead leaves an error that decays
 * only as (1 − 1/n)^k: still in the 4th decimal of ADX after 350 bars at n = 27.)
 */
function wilderSum(x: Series, n: number): Series {
  const out = nanArray(x.length);
  const start = firstFinite(x);
  if (x.length - start < n - 1 || n < 2) return n === 1 ? x.map((v) => v) : out;
  let prev = 0;
  for (let i = start; i < start + n - 1; i += 1) prev += x[i] as number;
  out[start + n - 2] = prev;
  for (let i = start + n - 1; i < x.length; i += 1) {
    prev = prev - prev / n + (x[i] as number);
    out[i] = prev;
  }
  return out;
}

export function atr(high: Series, low: Series, close: Series, n: number): Series {
  return wilderAverage(trange(high, low, close), n);
}

export function natr(high: Series, low: Series, close: Series, n: number): Series {
  return atr(high, low, close, n).map((a, i) => 100 * ratio(a, close[i] as number, 0));
}

function directionalMoves(high: Series, low: Series): { plus: Series; minus: Series } {
  const plus = nanArray(high.length);
  const minus = nanArray(high.length);
  for (let i = 1; i < high.length; i += 1) {
    const up = (high[i] as number) - (high[i - 1] as number);
    const down = (low[i - 1] as number) - (low[i] as number);
    plus[i] = up > down && up > 0 ? up : 0;
    minus[i] = down > up && down > 0 ? down : 0;
  }
  return { plus, minus };
}

export function plusDm(high: Series, low: Series, n: number): Series {
  return wilderSum(directionalMoves(high, low).plus, n);
}

export function minusDm(high: Series, low: Series, n: number): Series {
  return wilderSum(directionalMoves(high, low).minus, n);
}

/** ±DI from the running sums; TA-Lib starts them one step after the sums are seeded (bar n). */
function directionalIndicators(high: Series, low: Series, close: Series, n: number): { plus: Series; minus: Series } {
  const moves = directionalMoves(high, low);
  const tr = wilderSum(trange(high, low, close), n);
  const plus = wilderSum(moves.plus, n);
  const minus = wilderSum(moves.minus, n);
  const di = (dm: Series) => dm.map((v, i) => (i < n ? Number.NaN : 100 * ratio(v, tr[i] as number, 0)));
  return { plus: di(plus), minus: di(minus) };
}

export function plusDi(high: Series, low: Series, close: Series, n: number): Series {
  return directionalIndicators(high, low, close, n).plus;
}

export function minusDi(high: Series, low: Series, close: Series, n: number): Series {
  return directionalIndicators(high, low, close, n).minus;
}

export function dx(high: Series, low: Series, close: Series, n: number): Series {
  const di = directionalIndicators(high, low, close, n);
  return di.plus.map((p, i) => {
    const m = di.minus[i] as number;
    return 100 * ratio(Math.abs(p - m), p + m, 0);
  });
}

export function adx(high: Series, low: Series, close: Series, n: number): Series {
  return wilderAverage(dx(high, low, close, n), n);
}

export function adxr(high: Series, low: Series, close: Series, n: number): Series {
  const a = adx(high, low, close, n);
  return a.map((v, i) => (i >= n - 1 ? (v + (a[i - n + 1] as number)) / 2 : Number.NaN));
}

export function cci(high: Series, low: Series, close: Series, n: number): Series {
  const typical = close.map((c, i) => ((high[i] as number) + (low[i] as number) + c) / 3);
  const mean = sma(typical, n);
  return typical.map((tp, i) => {
    const m = mean[i] as number;
    if (!Number.isFinite(m)) return Number.NaN;
    let dev = 0;
    for (let j = i - n + 1; j <= i; j += 1) dev += Math.abs((typical[j] as number) - m);
    return ratio(tp - m, 0.015 * (dev / n), 0);
  });
}

/** Fast %K: where the close sits in the last `n` bars' range, 0..100. */
function fastK(high: Series, low: Series, close: Series, n: number): Series {
  return close.map((c, i) => {
    if (i < n - 1) return Number.NaN;
    const hh = highest(high, i - n + 1, i);
    const ll = lowest(low, i - n + 1, i);
    return 100 * ratio(c - ll, hh - ll, 0.5);
  });
}

export function stoch(
  high: Series,
  low: Series,
  close: Series,
  fastKPeriod: number,
  slowKPeriod: number,
  slowKMaType: number,
  slowDPeriod: number,
  slowDMaType: number,
): { slowK: Series; slowD: Series } {
  const slowK = movingAverage(slowKMaType, fastK(high, low, close, fastKPeriod), slowKPeriod);
  return { slowK, slowD: movingAverage(slowDMaType, slowK, slowDPeriod) };
}

/** Williams %R, -100..0. */
export function willr(high: Series, low: Series, close: Series, n: number): Series {
  return close.map((c, i) => {
    if (i < n - 1) return Number.NaN;
    const hh = highest(high, i - n + 1, i);
    const ll = lowest(low, i - n + 1, i);
    return -100 * ratio(hh - c, hh - ll, 0.5);
  });
}

/** Aroon up and down over the last `n`+1 bars, 0..100 (the most recent extreme wins ties). */
export function aroon(high: Series, low: Series, n: number): { up: Series; down: Series } {
  const up = nanArray(high.length);
  const down = nanArray(high.length);
  for (let i = n; i < high.length; i += 1) {
    let hi = i - n;
    let lo = i - n;
    for (let j = i - n; j <= i; j += 1) {
      if ((high[j] as number) >= (high[hi] as number)) hi = j;
      if ((low[j] as number) <= (low[lo] as number)) lo = j;
    }
    up[i] = (100 * (n - (i - hi))) / n;
    down[i] = (100 * (n - (i - lo))) / n;
  }
  return { up, down };
}

export function aroonOsc(high: Series, low: Series, n: number): Series {
  const a = aroon(high, low, n);
  return a.up.map((u, i) => u - (a.down[i] as number));
}

/** Money flow index, 0..100. */
export function mfi(high: Series, low: Series, close: Series, volume: Series, n: number): Series {
  const typical = close.map((c, i) => ((high[i] as number) + (low[i] as number) + c) / 3);
  return typical.map((_, i) => {
    if (i < n) return Number.NaN;
    let positive = 0;
    let negative = 0;
    for (let j = i - n + 1; j <= i; j += 1) {
      const flow = (typical[j] as number) * (volume[j] as number);
      if ((typical[j] as number) > (typical[j - 1] as number)) positive += flow;
      else if ((typical[j] as number) < (typical[j - 1] as number)) negative += flow;
    }
    return 100 * ratio(positive, positive + negative, 0.5);
  });
}

export function midprice(high: Series, low: Series, n: number): Series {
  return high.map((_, i) => (i >= n - 1 ? (highest(high, i - n + 1, i) + lowest(low, i - n + 1, i)) / 2 : Number.NaN));
}

/** Balance of power, -1..1. */
export function bop(open: Series, high: Series, low: Series, close: Series): Series {
  return close.map((c, i) => ratio(c - (open[i] as number), (high[i] as number) - (low[i] as number), 0));
}

/** Chaikin accumulation/distribution line. */
export function ad(high: Series, low: Series, close: Series, volume: Series): Series {
  let sum = 0;
  return close.map((c, i) => {
    const h = high[i] as number;
    const l = low[i] as number;
    sum += ratio(c - l - (h - c), h - l, 0) * (volume[i] as number);
    return sum;
  });
}

/** Chaikin oscillator: fast EMA minus slow EMA of the A/D line. */
export function adosc(high: Series, low: Series, close: Series, volume: Series, fast: number, slow: number): Series {
  const line = ad(high, low, close, volume);
  const f = ema(line, fast);
  const s = ema(line, slow);
  return s.map((v, i) => (f[i] as number) - v);
}

export function obv(close: Series, volume: Series): Series {
  let sum = 0;
  return close.map((c, i) => {
    if (i === 0) sum = volume[0] as number;
    else if (c > (close[i - 1] as number)) sum += volume[i] as number;
    else if (c < (close[i - 1] as number)) sum -= volume[i] as number;
    return sum;
  });
}

/** Ultimate oscillator over three periods, 0..100. */
export function ultosc(high: Series, low: Series, close: Series, p1: number, p2: number, p3: number): Series {
  const buying = nanArray(close.length);
  const range = nanArray(close.length);
  for (let i = 1; i < close.length; i += 1) {
    const pc = close[i - 1] as number;
    const trueLow = Math.min(low[i] as number, pc);
    buying[i] = (close[i] as number) - trueLow;
    range[i] = Math.max(high[i] as number, pc) - trueLow;
  }
  const longest = Math.max(p1, p2, p3);
  const average = (i: number, p: number) => {
    let b = 0;
    let r = 0;
    for (let j = i - p + 1; j <= i; j += 1) {
      b += buying[j] as number;
      r += range[j] as number;
    }
    return ratio(b, r, 0.5);
  };
  return close.map((_, i) => (i < longest ? Number.NaN : (100 * (4 * average(i, p1) + 2 * average(i, p2) + average(i, p3))) / 7));
}

/**
 * Wilder's parabolic stop-and-reverse, step for step as TA-Lib's TA_SAR: the first direction from the
 * first bar's directional movement (short only when −DM is positive and larger), a reversal when a bar
 * touches the stop, and every next stop kept outside the last two bars' range.
 */
export function sar(high: Series, low: Series, acceleration: number, maximum: number): Series {
  const out = nanArray(high.length);
  if (high.length < 2) return out;
  const up = (high[1] as number) - (high[0] as number);
  const down = (low[0] as number) - (low[1] as number);
  let long = !(down > 0 && down > up);
  let af = acceleration;
  let extreme = long ? (high[1] as number) : (low[1] as number);
  let stop = long ? (low[0] as number) : (high[0] as number);
  let newHigh = high[1] as number;
  let newLow = low[1] as number;
  for (let i = 1; i < high.length; i += 1) {
    const prevHigh = newHigh;
    const prevLow = newLow;
    newHigh = high[i] as number;
    newLow = low[i] as number;
    if (long && newLow <= stop) {
      long = false;
      stop = Math.max(extreme, prevHigh, newHigh);
      out[i] = stop;
      af = acceleration;
      extreme = newLow;
    } else if (!long && newHigh >= stop) {
      long = true;
      stop = Math.min(extreme, prevLow, newLow);
      out[i] = stop;
      af = acceleration;
      extreme = newHigh;
    } else {
      out[i] = stop;
      if (long && newHigh > extreme) {
        extreme = newHigh;
        af = Math.min(af + acceleration, maximum);
      } else if (!long && newLow < extreme) {
        extreme = newLow;
        af = Math.min(af + acceleration, maximum);
      }
    }
    stop += af * (extreme - stop);
    stop = long ? Math.min(stop, prevLow, newLow) : Math.max(stop, prevHigh, newHigh);
  }
  return out;
}
