// The technical indicators Alpha Vantage documents, with the parameters each one takes. The route, the
// adapter and the simulator all read this one table.

export const INTERVALS = ['1min', '5min', '15min', '30min', '60min', 'daily', 'weekly', 'monthly'] as const;
export type Interval = (typeof INTERVALS)[number];
export const INTRADAY_INTERVALS: ReadonlySet<Interval> = new Set(['1min', '5min', '15min', '30min', '60min']);

export const SERIES_TYPES = ['close', 'open', 'high', 'low'] as const;
export type SeriesType = (typeof SERIES_TYPES)[number];

export interface IndicatorSpec {
  /** The value `2: Indicator` carries in the upstream's `Meta Data`. */
  title: string;
  /** Takes `series_type` (price-based) rather than high/low/close. */
  seriesType: boolean;
  /** Default `time_period`, or null when the indicator takes none. */
  timePeriod: number | null;
  /** Keys of each row in `Technical Analysis: <section>`. */
  valueKeys: readonly string[];
  /** The `Technical Analysis: …` section name when it differs from the function name. */
  section?: string;
  /** Fixed extra parameters the real API needs, with their defaults. */
  extra?: Readonly<Record<string, string>>;
}

const price = (title: string, timePeriod: number | null = 14): IndicatorSpec => ({ title, seriesType: true, timePeriod, valueKeys: [] });
const hlc = (title: string, timePeriod: number | null = 14): IndicatorSpec => ({ title, seriesType: false, timePeriod, valueKeys: [] });

const SPECS: Record<string, IndicatorSpec> = {
  SMA: price('Simple Moving Average (SMA)'),
  EMA: price('Exponential Moving Average (EMA)'),
  WMA: price('Weighted Moving Average (WMA)'),
  DEMA: price('Double Exponential Moving Average (DEMA)'),
  TEMA: price('Triple Exponential Moving Average (TEMA)'),
  TRIMA: price('Triangular Exponential Moving Average (TRIMA)'),
  KAMA: price('Kaufman Adaptive Moving Average (KAMA)'),
  T3: price('Triple Exponential Moving Average (T3)'),
  RSI: price('Relative Strength Index (RSI)'),
  MOM: price('Momentum (MOM)'),
  CMO: price('Chande Momentum Oscillator (CMO)'),
  ROC: price('Rate of change : ((price/prevPrice)-1)*100'),
  ROCR: price('Rate of change ratio: (price/prevPrice)'),
  TRIX: price('1-day Rate-Of-Change (ROC) of a Triple Smooth EMA'),
  MIDPOINT: price('MidPoint over period (MIDPOINT)'),
  MACD: {
    ...price('Moving Average Convergence/Divergence (MACD)', null),
    // Row value order as recorded (IBM daily, 2021; a 2020 GOOGL monthly answer had MACD_Signal first).
    valueKeys: ['MACD', 'MACD_Signal', 'MACD_Hist'],
    extra: { fastperiod: '12', slowperiod: '26', signalperiod: '9' },
  },
  BBANDS: {
    ...price('Bollinger Bands (BBANDS)', 20),
    // Row value order as recorded (IBM weekly, 2020).
    valueKeys: ['Real Upper Band', 'Real Lower Band', 'Real Middle Band'],
    extra: { nbdevup: '2', nbdevdn: '2', matype: '0' },
  },
  HT_TRENDLINE: price('Hilbert Transform - Instantaneous Trendline', null),
  HT_SINE: { ...price('Hilbert Transform - SineWave', null), valueKeys: ['LEAD SINE', 'SINE'] },
  HT_TRENDMODE: { ...price('Hilbert Transform - Trend vs Cycle Mode', null), valueKeys: ['TRENDMODE'] },
  HT_DCPERIOD: { ...price('Hilbert Transform - Dominant Cycle Period', null), valueKeys: ['DCPERIOD'] },
  HT_DCPHASE: price('Hilbert Transform - Dominant Cycle Phase', null),
  HT_PHASOR: { ...price('Hilbert Transform - Phasor Components', null), valueKeys: ['PHASE', 'QUADRATURE'] },
  ADX: hlc('Average Directional Movement Index (ADX)'),
  ADXR: hlc('Average Directional Movement Index Rating (ADXR)'),
  CCI: hlc('Commodity Channel Index (CCI)'),
  ATR: hlc('Average True Range (ATR)'),
  NATR: hlc('Normalized Average True Range (NATR)'),
  STOCH: {
    ...hlc('Stochastic (STOCH)', null),
    // Row value order as recorded (IBM daily, 2020).
    valueKeys: ['SlowD', 'SlowK'],
    extra: { fastkperiod: '5', slowkperiod: '3', slowdperiod: '3', slowkmatype: '0', slowdmatype: '0' },
  },
  WILLR: hlc("Williams' %R (WILLR)"),
  AROON: { ...hlc('Aroon (AROON)'), valueKeys: ['Aroon Down', 'Aroon Up'] },
  AROONOSC: hlc('Aroon Oscillator (AROONOSC)'),
  MFI: hlc('Money Flow Index (MFI)'),
  DX: hlc('Directional Movement Index (DX)'),
  MINUS_DI: hlc('Minus Directional Indicator (MINUS_DI)'),
  PLUS_DI: hlc('Plus Directional Indicator (PLUS_DI)'),
  MINUS_DM: hlc('Minus Directional Movement (MINUS_DM)'),
  PLUS_DM: hlc('Plus Directional Movement (PLUS_DM)'),
  MIDPRICE: hlc('Midpoint Price over period (MIDPRICE)'),
  TRANGE: hlc('True Range (TRANGE)', null),
  BOP: hlc('Balance Of Power (BOP)', null),
  AD: { ...hlc('Chaikin A/D Line', null), valueKeys: ['Chaikin A/D'], section: 'Chaikin A/D' },
  ADOSC: { ...hlc('Chaikin A/D Oscillator (ADOSC)', null), extra: { fastperiod: '3', slowperiod: '10' } },
  OBV: hlc('On Balance Volume (OBV)', null),
  ULTOSC: { ...hlc('Ultimate Oscillator (ULTOSC)', null), extra: { timeperiod1: '7', timeperiod2: '14', timeperiod3: '28' } },
  SAR: { ...hlc('Parabolic SAR (SAR)', null), extra: { acceleration: '0.01', maximum: '0.20' } },
};

export const INDICATORS = Object.keys(SPECS) as readonly string[];

/**
 * How a parameter's value is read. `period` and `matype` are plain decimal integers; `real` and
 * `positive` plain decimals (no exponent, no sign on `positive`).
 */
export type ParamKind = 'period' | 'matype' | 'real' | 'positive';

export interface IndicatorParam {
  name: string;
  /** The label Alpha Vantage gives it in `Meta Data`. */
  label: string;
  kind: ParamKind;
}

/** The optional parameters each indicator takes beyond `time_period`/`series_type`; defaults in `extra`. */
const PARAMS: Record<string, readonly IndicatorParam[]> = {
  MACD: [
    { name: 'fastperiod', label: 'Fast Period', kind: 'period' },
    { name: 'slowperiod', label: 'Slow Period', kind: 'period' },
    { name: 'signalperiod', label: 'Signal Period', kind: 'period' },
  ],
  BBANDS: [
    { name: 'nbdevup', label: 'Deviation multiplier for upper band', kind: 'real' },
    { name: 'nbdevdn', label: 'Deviation multiplier for lower band', kind: 'real' },
    { name: 'matype', label: 'MA Type', kind: 'matype' },
  ],
  STOCH: [
    { name: 'fastkperiod', label: 'FastK Period', kind: 'period' },
    { name: 'slowkperiod', label: 'SlowK Period', kind: 'period' },
    { name: 'slowkmatype', label: 'SlowK MA Type', kind: 'matype' },
    { name: 'slowdperiod', label: 'SlowD Period', kind: 'period' },
    { name: 'slowdmatype', label: 'SlowD MA Type', kind: 'matype' },
  ],
  ADOSC: [
    { name: 'fastperiod', label: 'FastK Period', kind: 'period' },
    { name: 'slowperiod', label: 'SlowK Period', kind: 'period' },
  ],
  ULTOSC: [
    { name: 'timeperiod1', label: 'Time Period 1', kind: 'period' },
    { name: 'timeperiod2', label: 'Time Period 2', kind: 'period' },
    { name: 'timeperiod3', label: 'Time Period 3', kind: 'period' },
  ],
  SAR: [
    { name: 'acceleration', label: 'Acceleration', kind: 'positive' },
    { name: 'maximum', label: 'Maximum', kind: 'positive' },
  ],
};

/** The optional parameters `fn` takes, in Alpha Vantage's `Meta Data` order. */
export function indicatorParams(fn: string): readonly IndicatorParam[] {
  return PARAMS[fn] ?? [];
}

/** Every optional parameter name any indicator takes (for route schemas). */
export const INDICATOR_PARAM_NAMES: readonly string[] = [...new Set(Object.values(PARAMS).flatMap((list) => list.map((p) => p.name)))];

/** The spec for `fn`, with `valueKeys` defaulting to the function name. */
export function indicatorSpec(fn: string): IndicatorSpec | undefined {
  const spec = SPECS[fn];
  if (spec === undefined) return undefined;
  return spec.valueKeys.length > 0 ? spec : { ...spec, valueKeys: [fn] };
}

/** The response key holding the series, e.g. `Technical Analysis: RSI`. */
export function sectionKey(fn: string): string {
  return `Technical Analysis: ${SPECS[fn]?.section ?? fn}`;
}
