// Which source answered: every quote and technical answer says it in `X-Data-Source`, and the status
// endpoint and /metrics count answers per endpoint and source.

const DATA_SOURCES = ['alpha-vantage', 'yahoo'] as const;
export type DataSource = (typeof DATA_SOURCES)[number];
export const PRIMARY: DataSource = 'alpha-vantage';
export const FALLBACK: DataSource = 'yahoo';

export type SourcedEndpoint = 'quote' | 'technical';

export class SourceTally {
  readonly answers: Record<SourcedEndpoint, Record<DataSource, number>> = {
    quote: { 'alpha-vantage': 0, yahoo: 0 },
    technical: { 'alpha-vantage': 0, yahoo: 0 },
  };

  count(endpoint: SourcedEndpoint, source: DataSource): void {
    this.answers[endpoint][source] += 1;
  }
}
