// The parameters an indicator is computed with, and the extra ones some indicators take beyond
// `time_period` and `series_type` (with the label Alpha Vantage prints for each in `Meta Data`).
import type { Interval, SeriesType } from '../upstreams/alpha-vantage/indicators.js';

export interface IndicatorParams {
  interval: Interval;
  timePeriod: number | null;
  seriesType: SeriesType | null;
  /** Every extra parameter of the indicator, by its query name (defaults filled in). */
  extra: Record<string, number>;
}

export type ParamKind = 'period' | 'matype' | 'real' | 'positive';

export interface ExtraParam {
  name: string;
  /** The label in `Meta Data`. */
  label: string;
  kind: ParamKind;
}

export const EXTRA_PARAMS: Readonly<Record<string, readonly ExtraParam[]>> = {
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

/** Tillson's volume factor; Alpha Vantage reports it but takes no parameter for it. */
export const T3_VOLUME_FACTOR = 0.7;
