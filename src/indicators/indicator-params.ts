// The parameters an indicator is computed with. Which extra parameters each indicator takes (and the
// label Alpha Vantage prints for each in `Meta Data`) is `indicatorParams` in wire/alpha-vantage/indicators.ts.
import type { Interval, SeriesType } from '../wire/alpha-vantage/indicators.js';

export interface IndicatorParams {
  interval: Interval;
  timePeriod: number | null;
  seriesType: SeriesType | null;
  /** Every extra parameter of the indicator, by its query name (defaults filled in). */
  extra: Record<string, number>;
}

/** Tillson's volume factor; Alpha Vantage reports it but takes no parameter for it. */
export const T3_VOLUME_FACTOR = 0.7;
