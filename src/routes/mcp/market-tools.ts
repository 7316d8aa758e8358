// get_dividends, get_market_overview and get_service_status: GET /api/provider-b/dividends, /api/market/overview
// and /api/system/status, through the same services and the same status.
import { Type } from '@sinclair/typebox';
import { use } from '../../core/configured.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../services/dividend-service.js';
import { CURSOR_PATTERN } from '../../upstreams/massive/dividend-cursor.js';
import { DIVIDENDS_PATH, DividendRecord } from '../provider-b/dividends.js';
import { StringEnum, SymbolParam } from '../schemas.js';
import { INSTRUMENT_CATEGORIES } from '../../upstreams/overview-source.js';
import { Freshness, Num, numberOf } from './schemas.js';
import { answer, tool } from './tool.js';

export const getDividends = tool({
  name: 'get_dividends',
  title: 'Dividends',
  description:
    'Declared dividends, newest ex-dividend date first: of one symbol, or of every stock without one. Use it for dividend amounts and dates; follow nextCursor for older ones.',
  input: Type.Object(
    {
      symbol: Type.Optional(SymbolParam),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `Dividends per page (default ${DEFAULT_LIMIT}).` })),
      cursor: Type.Optional(Type.String({ pattern: CURSOR_PATTERN, description: 'nextCursor of the previous answer, for the next page.' })),
    },
    { additionalProperties: false },
  ),
  output: {
    dividends: Type.Array(DividendRecord),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass it as cursor for the next page; null on the last.' }),
  },
  async run(args, { deps }) {
    const { entry } = await deps.dividends.page(args, DIVIDENDS_PATH);
    const { results, next } = entry.value;
    const nextCursor = next === null ? null : new URLSearchParams(next.slice(next.indexOf('?') + 1)).get('cursor');
    return answer({
      content: { dividends: results, nextCursor },
      rows: {
        path: ['dividends'],
        hint: (returned) => `Ask with limit=${returned} or less to get whole pages, following nextCursor from one to the next.`,
      },
      text: ({ dividends: rows }) =>
        rows.length === 0
          ? `No dividends${args.symbol === undefined ? '' : ` of ${args.symbol.toUpperCase()}`}.`
          : `${rows.length} dividends, ex-dividend dates ${rows.at(-1)?.ex_dividend_date} to ${rows[0]?.ex_dividend_date}; latest ${rows[0]?.ticker} ${rows[0]?.cash_amount} ${rows[0]?.currency ?? ''}.${nextCursor === null ? '' : ' More: pass nextCursor as cursor.'}`,
    });
  },
});

const Instrument = Type.Object(
  {
    symbol: Type.String(),
    name: Type.Optional(Type.String()),
    category: StringEnum(INSTRUMENT_CATEGORIES),
    price: Num(),
    change: Num(),
    changePercent: Num('In percent.'),
    currency: Type.Optional(Type.String()),
    asOf: Type.String(),
    freshness: Freshness,
  },
  { additionalProperties: false },
);

export const getMarketOverview = tool({
  name: 'get_market_overview',
  title: 'Market overview',
  description:
    'The main US indices, the VIX, commodities and crypto (as the service is configured): price and change against the previous close. Use it for "how is the market doing".',
  input: Type.Object({}, { additionalProperties: false }),
  output: {
    instruments: Type.Array(Instrument),
    missing: Type.Array(Type.String(), { description: 'Instruments that could not be read now.' }),
  },
  async run(_args, { deps }) {
    const { entry } = await use(deps.overview).get();
    const instruments = Object.entries(entry.value.quotes).map(([symbol, { price, change, changePercent, ...rest }]) => ({
      symbol,
      ...rest,
      price: numberOf(price),
      change: numberOf(change),
      changePercent: numberOf(changePercent),
    }));
    return answer({
      content: { instruments, missing: entry.value.missing },
      text: (c) => `${c.instruments.map((i) => `${i.name ?? i.symbol} ${i.price} (${i.changePercent} %)`).join('; ')}.`,
    });
  },
});

const Budget = Type.Union(
  [
    Type.Object(
      {
        limitMinute: Num(),
        limitDay: Num(),
        usedMinute: Type.Integer(),
        usedDay: Type.Integer(),
        leftMinute: Num(),
        leftDay: Num(),
        nextAvailableAt: Type.Union([Type.String(), Type.Null()]),
        backedOffUntil: Type.Union([Type.String(), Type.Null()]),
        store: Type.String(),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'Calls left this minute and day (null: no cap); when the next call may go (null: now).' },
);

export const getServiceStatus = tool({
  name: 'get_service_status',
  title: 'Service status and budgets',
  description:
    "Each provider's state, the calls its budget has left this minute and today, and when the next call may go. Use it to plan many calls, or after QUOTA_EXHAUSTED, to know when to come back.",
  input: Type.Object({}, { additionalProperties: false }),
  output: {
    status: Type.String({ description: 'ok, degraded or down.' }),
    reason: Type.String(),
    mode: Type.String({ description: 'sandbox or live.' }),
    upstreams: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          label: Type.String(),
          state: Type.String({ description: 'ok, failing, idle or not_configured.' }),
          budget: Budget,
          circuit: Type.Union([Type.String(), Type.Null()], { description: 'open: calls fail fast until nextProbeAt.' }),
          nextProbeAt: Type.Union([Type.String(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
    ),
  },
  async run(_args, { status }) {
    const { status: overall, reason, mode, upstreams } = await status();
    return answer({
      content: {
        status: overall,
        reason,
        mode,
        upstreams: upstreams.map(({ id, label, state, budget, circuit }) => ({
          id,
          label,
          state,
          budget,
          circuit: circuit?.state ?? null,
          nextProbeAt: circuit?.nextProbeAt ?? null,
        })),
      },
      text: (c) =>
        `${c.status}: ${c.reason}. ${c.upstreams
          .filter((u) => u.budget !== null)
          .map((u) => `${u.label}: ${u.budget?.leftMinute ?? 'no cap'} left this minute, ${u.budget?.leftDay ?? 'no cap'} today`)
          .join('; ')}.`,
    });
  },
});
