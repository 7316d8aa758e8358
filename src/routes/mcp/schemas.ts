// Schemas the tools share. Kept short on purpose: tools/list is read by a model on every session, and stays
// under 16 KB (its test), so descriptions say what a value is in a few words and docs/reference/ says the rest.
import { Type } from '@sinclair/typebox';
import { FEEDS, FRESHNESS_KINDS, MARKET_STATES } from '../../core/freshness.js';
import { StringEnum, SymbolParam } from '../schemas.js';

/** The same values as the REST answers' `freshness` and X-Data-Freshness (core/freshness.ts), without their long descriptions. */
export const Freshness = Type.Object(
  {
    kind: StringEnum(FRESHNESS_KINDS),
    asOf: Type.String({ description: 'The market date or date-time the value stands for.' }),
    delayMinutes: Type.Optional(Type.Integer()),
    market: Type.Optional(StringEnum(MARKET_STATES)),
    feed: Type.Optional(StringEnum(FEEDS)),
  },
  { additionalProperties: false, $id: 'ToolFreshness', description: 'How fresh: docs/reference/freshness.md.' },
);

export const Source = Type.String({ description: 'alpha-vantage, yahoo, broker-stream or broker-snapshot.' });

/** An error a tool answers with (`isError: true`): the REST error's code and message, the wait where there is one, what to do. */
export const ToolError = Type.Object(
  {
    code: Type.String({ description: 'The REST error code, e.g. SYMBOL_NOT_FOUND, QUOTA_EXHAUSTED.' }),
    message: Type.String(),
    retryAfterSeconds: Type.Optional(Type.Integer({ description: 'Seconds to wait before the same call can succeed.' })),
    action: Type.String({ description: 'What to do about it.' }),
  },
  { additionalProperties: false },
);

/** Said when an answer was cut to MCP_MAX_RESULT_BYTES. */
export const Truncated = Type.Object(
  {
    rows: Type.String({ description: 'Which rows were cut.' }),
    returned: Type.Integer(),
    leftOut: Type.Integer(),
    hint: Type.String({ description: 'How to ask for the rest.' }),
  },
  { additionalProperties: false },
);

/** 1 to `max` ticker symbols, each as the REST routes read one (SymbolParam). */
export function Symbols(max: number, description: string) {
  return Type.Array(SymbolParam, { minItems: 1, maxItems: max, description });
}

/** A whole number of rows to return, latest first. */
export function Limit(fallback: number, maximum: number, what: string) {
  return Type.Integer({ minimum: 1, maximum, default: fallback, description: `How many ${what}, latest first (default ${fallback}).` });
}

/** `YYYY-MM-DD`, or a date-time as the series writes it (`YYYY-MM-DD HH:MM:SS`): a bound of a range of bars. */
export const DateBound = (description: string) =>
  Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}', maxLength: 19, description }));

/** A string of digits as a number: Alpha Vantage's values ("170.9100", "0.5649%") are sent as numbers here. */
export function numberOf(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const value = Number(text.replace(/%$/, ''));
  return Number.isFinite(value) ? value : null;
}

export const Num = (description?: string) => Type.Union([Type.Number(), Type.Null()], description === undefined ? {} : { description });
