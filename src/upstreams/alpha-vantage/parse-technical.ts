// Technical indicators: `Meta Data` plus `Technical Analysis: <section>`, rows of decimal strings. The
// upstream shape is kept; only what a client relies on is checked.
import { UnreadableAnswerError } from '../../core/errors.js';
import { parseDecimal } from '../../wire/alpha-vantage/decimal.js';
import { sectionKey } from '../../wire/alpha-vantage/indicators.js';

type TechnicalRow = Record<string, string>;
export type TechnicalBody = { 'Meta Data': Record<string, string | number> } & Record<string, Record<string, TechnicalRow>>;

const ROW_KEY = /^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$/;

/** Takes a body already classified as data. */
export function parseTechnical(body: Record<string, unknown>, fn: string): TechnicalBody {
  const meta = body['Meta Data'];
  const section = sectionKey(fn);
  const rows = body[section];
  if (!isRecord(meta) || !Object.values(meta).every((v) => typeof v === 'string' || typeof v === 'number')) {
    throw new UnreadableAnswerError('technical-meta', `Alpha Vantage sent ${fn} without valid "Meta Data"`);
  }
  if (!isRecord(rows)) throw new UnreadableAnswerError('no-technical-series', `Alpha Vantage sent ${fn} without "${section}"`);
  for (const [time, row] of Object.entries(rows)) {
    if (!ROW_KEY.test(time) || !isRecord(row) || !Object.values(row).every((v) => parseDecimal(v) !== undefined)) {
      throw new UnreadableAnswerError('technical-row', `Alpha Vantage sent ${fn} with a malformed row`);
    }
  }
  return { 'Meta Data': meta as Record<string, string | number>, [section]: rows as Record<string, TechnicalRow> } as TechnicalBody;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
