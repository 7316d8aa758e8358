// One indicator function, by its Alpha Vantage name, over a bar series: the outputs keyed the way Alpha
// Vantage keys each row's values. Used by the sandbox's Alpha Vantage simulator and by the fallback that
// computes indicators from Yahoo bars, so both serve the same maths.
import * as m from './indicator-math.js';
import { type IndicatorParams, T3_VOLUME_FACTOR } from './indicator-params.js';

/** One bar, oldest first in every series. */
export interface OhlcvBar {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** Every output of `fn` over the bars, keyed by the row value keys Alpha Vantage uses. */
export function computeIndicator(fn: string, bars: readonly OhlcvBar[], params: IndicatorParams): Record<string, m.Series> {
  const open = bars.map((b) => b.open);
  const high = bars.map((b) => b.high);
  const low = bars.map((b) => b.low);
  const close = bars.map((b) => b.close);
  const volume = bars.map((b) => b.volume);
  const price = { open, high, low, close }[params.seriesType ?? 'close'];
  const n = params.timePeriod ?? 0;
  const x = params.extra;
  const p = (name: string) => x[name] as number;
  switch (fn) {
    case 'SMA':
      return { SMA: m.sma(price, n) };
    case 'EMA':
      return { EMA: m.ema(price, n) };
    case 'WMA':
      return { WMA: m.wma(price, n) };
    case 'DEMA':
      return { DEMA: m.dema(price, n) };
    case 'TEMA':
      return { TEMA: m.tema(price, n) };
    case 'TRIMA':
      return { TRIMA: m.trima(price, n) };
    case 'KAMA':
      return { KAMA: m.kama(price, n) };
    case 'T3':
      return { T3: m.t3(price, n, T3_VOLUME_FACTOR) };
    case 'RSI':
      return { RSI: m.rsi(price, n) };
    case 'MOM':
      return { MOM: m.mom(price, n) };
    case 'CMO':
      return { CMO: m.cmo(price, n) };
    case 'ROC':
      return { ROC: m.roc(price, n) };
    case 'ROCR':
      return { ROCR: m.rocr(price, n) };
    case 'TRIX':
      return { TRIX: m.trix(price, n) };
    case 'MIDPOINT':
      return { MIDPOINT: m.midpoint(price, n) };
    case 'MACD': {
      const r = m.macd(price, p('fastperiod'), p('slowperiod'), p('signalperiod'));
      return { MACD: r.macd, MACD_Signal: r.signal, MACD_Hist: r.hist };
    }
    case 'BBANDS': {
      const r = m.bbands(price, n, p('nbdevup'), p('nbdevdn'), p('matype'));
      return { 'Real Upper Band': r.upper, 'Real Middle Band': r.middle, 'Real Lower Band': r.lower };
    }
    case 'HT_TRENDLINE':
      return { HT_TRENDLINE: m.htTrendline(price) };
    case 'HT_SINE': {
      const r = m.htSine(price);
      return { SINE: r.sine, 'LEAD SINE': r.leadSine };
    }
    case 'HT_TRENDMODE':
      return { TRENDMODE: m.htTrendMode(price) };
    case 'HT_DCPERIOD':
      return { DCPERIOD: m.htDcPeriod(price) };
    case 'HT_DCPHASE':
      return { HT_DCPHASE: m.htDcPhase(price) };
    case 'HT_PHASOR': {
      const r = m.htPhasor(price);
      return { PHASE: r.phase, QUADRATURE: r.quadrature };
    }
    case 'ADX':
      return { ADX: m.adx(high, low, close, n) };
    case 'ADXR':
      return { ADXR: m.adxr(high, low, close, n) };
    case 'CCI':
      return { CCI: m.cci(high, low, close, n) };
    case 'ATR':
      return { ATR: m.atr(high, low, close, n) };
    case 'NATR':
      return { NATR: m.natr(high, low, close, n) };
    case 'STOCH': {
      const r = m.stoch(high, low, close, p('fastkperiod'), p('slowkperiod'), p('slowkmatype'), p('slowdperiod'), p('slowdmatype'));
      return { SlowK: r.slowK, SlowD: r.slowD };
    }
    case 'WILLR':
      return { WILLR: m.willr(high, low, close, n) };
    case 'AROON': {
      const r = m.aroon(high, low, n);
      return { 'Aroon Up': r.up, 'Aroon Down': r.down };
    }
    case 'AROONOSC':
      return { AROONOSC: m.aroonOsc(high, low, n) };
    case 'MFI':
      return { MFI: m.mfi(high, low, close, volume, n) };
    case 'DX':
      return { DX: m.dx(high, low, close, n) };
    case 'MINUS_DI':
      return { MINUS_DI: m.minusDi(high, low, close, n) };
    case 'PLUS_DI':
      return { PLUS_DI: m.plusDi(high, low, close, n) };
    case 'MINUS_DM':
      return { MINUS_DM: m.minusDm(high, low, n) };
    case 'PLUS_DM':
      return { PLUS_DM: m.plusDm(high, low, n) };
    case 'MIDPRICE':
      return { MIDPRICE: m.midprice(high, low, n) };
    case 'TRANGE':
      return { TRANGE: m.trange(high, low, close) };
    case 'BOP':
      return { BOP: m.bop(open, high, low, close) };
    case 'AD':
      return { 'Chaikin A/D': m.ad(high, low, close, volume) };
    case 'ADOSC':
      return { ADOSC: m.adosc(high, low, close, volume, p('fastperiod'), p('slowperiod')) };
    case 'OBV':
      return { OBV: m.obv(close, volume) };
    case 'ULTOSC':
      return { ULTOSC: m.ultosc(high, low, close, p('timeperiod1'), p('timeperiod2'), p('timeperiod3')) };
    case 'SAR':
      return { SAR: m.sar(high, low, p('acceleration'), p('maximum')) };
    default:
      throw new Error(`no computation for indicator ${fn}`);
  }
}
