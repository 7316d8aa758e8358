// Schemas shared by several routes: one source for validation, serialisation and the OpenAPI document.
import { type SchemaOptions, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../core/errors.js';
import { FEEDS, FRESHNESS_KINDS, MARKET_STATES } from '../core/freshness.js';
import { bmpClass } from '../core/portable-pattern.js';
import { SYMBOL_PATTERN } from '../core/symbol-list.js';

/**
 * Types a route's request and reply from its TypeBox schemas (`app.withTypeProvider<TypeBoxTypeProvider>()`).
 * @fastify/type-provider-typebox 5 is the line made for @sinclair/typebox 0.34; version 6 is typed for
 * typebox 1, where this TypeBox's enums (Type.Unsafe) read as unknown.
 */
export type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

/** Enums matched in any letter case: plugins/app/query-values.ts puts a value in its listed spelling. */
export { CASE_INSENSITIVE } from '../plugins/app/query-values.js';
export const ANY_CASE = 'Matched in any letter case (e.g. `rsi`, `Daily`); the values listed are the canonical spelling.';

/** A string enum as plain JSON Schema `enum`: clear validation errors and a clean OpenAPI document. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

export const SymbolParam = Type.String({
  minLength: 1,
  maxLength: 20,
  pattern: SYMBOL_PATTERN,
  description: 'Ticker symbol: letters, digits, ".", "-", "^", "=", at most 20 characters. Case-insensitive.',
  examples: ['IBM'],
});

/**
 * Letters and digits of any script (of the Basic Multilingual Plane), spaces and the punctuation company names
 * and tickers use: `^[\p{L}\p{N} .,&'^=/()-]{1,64}$`, spelt out so that every engine reads it alike
 * (portable-pattern.ts). @internal
 */
export const KEYWORDS_PATTERN = `^[${bmpClass(/[\p{L}\p{N}]/u)} .,&'^=/()-]{1,64}$`;

export const KeywordsParam = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: KEYWORDS_PATTERN,
  description:
    "Part of a symbol or company name (case-insensitive): letters and digits of any script (outside the rare ones beyond Unicode's Basic Multilingual Plane), spaces and . , & ' ^ = / ( ) -, at most 64 characters.",
  examples: ['micro'],
});

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((code) => Type.Literal(code))),
      message: Type.String(),
      status: Type.Integer(),
      requestId: Type.String(),
    }),
  },
  { $id: 'ErrorResponse', description: 'Every error, whatever the route, has this shape.' },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'MISSING_PARAMETER or INVALID_PARAMETER',
  401: 'INVALID_CLIENT_KEY: the bearer token sent is no client key (CLIENT_KEYS); on broker routes BROKER_FORBIDDEN: it is not BROKER_TOKEN',
  403: 'CLIENT_KEY_FORBIDDEN: the client key may not be used here (its scopes); on broker data BROKER_FORBIDDEN: not for this caller (its network, proxy or web origin); the message says what to configure',
  404: 'SYMBOL_NOT_FOUND',
  429: 'RATE_LIMITED (this caller), CALLER_SHARE_SPENT (this caller has spent its fair share of the upstream budget; cached answers are still served) or QUOTA_EXHAUSTED (upstream budget); see Retry-After',
  502: 'UPSTREAM_ERROR',
  503: 'PROVIDER_NOT_CONFIGURED, BROKER_UNAVAILABLE, or SHUTTING_DOWN (this instance is draining; retry); see Retry-After',
  504: 'UPSTREAM_TIMEOUT',
};

/** Every route answering through sendCached can answer 304 (headers only; see the OpenAPI plugin). */
export const NOT_MODIFIED = { 304: Type.Null({ description: 'Not Modified: the ETag sent in If-None-Match is still current. No body.' }) };

/** Response schemas for the error statuses a route can answer with. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(
    statuses.map((status) => [status, Type.Ref(ErrorResponse, { description: ERROR_DESCRIPTIONS[status] ?? 'Error' })]),
  );
}

/** Literals TypeBox's own checker reads too (the route tests check bodies with it); the document shows them as one enum. */
function LiteralUnion<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );
}

/** How fresh a price is (core/freshness.ts): on each broker quote and overview entry, and in the stream's quote events. */
export const FreshnessSchema = Type.Object(
  {
    kind: LiteralUnion(FRESHNESS_KINDS, {
      description:
        "realtime: a live value, as the source says. delayed: a live value, behind the market. end-of-day: the day's close. frozen: the last value before the close, shown after it. prior-close: the previous session's close in place of a trade. halted: trading is halted. unknown: the source does not say (never taken for realtime).",
    }),
    delayMinutes: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Minutes behind the market, only where the source states the number.' }),
    ),
    asOf: Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2}))?$',
      description:
        "The market time the value stands for (ISO 8601): a date-time where the source gives one (else when the service received the value), a date (the exchange's trading day) where it gives only the day.",
      examples: ['2026-04-28T19:59:00.000Z', '2026-04-27'],
    }),
    market: Type.Optional(
      LiteralUnion(MARKET_STATES, {
        description: "The market's state when the source answered (pre, regular, post, closed), where the source says it.",
      }),
    ),
    feed: Type.Optional(
      LiteralUnion(FEEDS, {
        description:
          'The market-data feed the value came through, where the source states it and kind does not say it: a previous close sent by a delayed feed is `{ "kind": "prior-close", "feed": "delayed" }`.',
      }),
    ),
  },
  { additionalProperties: false, $id: 'Freshness', description: 'How fresh the price is. See docs/reference/freshness.md.' },
);
