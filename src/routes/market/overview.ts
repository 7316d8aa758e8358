// GET /api/market/overview -> { "^GSPC": { price, change, changePercent, name, category, currency, asOf, freshness }, ... }
// Instruments that could not be served are left out and named in `X-Partial` (comma list).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CacheEntry, CacheResult } from '../../cache/cache-store.js';
import { type Configured, use } from '../../core/configured.js';
import { errorResponses, FreshnessSchema, NOT_MODIFIED, StringEnum, type TypeBoxTypeProvider } from '../schemas.js';
import { sendCached } from '../../plugins/app/send-cached.js';
import type { MarketOverview, OverviewValue } from '../../services/market-overview.js';
import type { OverviewEntry } from '../../services/overview-entry.js';
import { INSTRUMENT_CATEGORIES } from '../../upstreams/overview-source.js';

const TWO_DECIMALS = '^-?\\d+\\.\\d{2}$';

const OverviewEntrySchema = Type.Object(
  {
    price: Type.String({ pattern: TWO_DECIMALS, examples: ['5222.68'] }),
    change: Type.String({ pattern: TWO_DECIMALS, description: 'Against the previous daily close.', examples: ['-8.60'] }),
    changePercent: Type.String({ pattern: '^-?\\d+\\.\\d{2}%$', examples: ['-0.16%'] }),
    name: Type.Optional(Type.String({ examples: ['S&P 500'] })),
    category: StringEnum(INSTRUMENT_CATEGORIES, {
      description:
        'What the instrument is, as the source says: index, commodity (futures), crypto, equity (shares and ETFs), fund (a mutual fund: a net asset value struck once a day), currency.',
    }),
    currency: Type.Optional(Type.String({ examples: ['USD'] })),
    asOf: Type.String({ format: 'date-time', description: 'Time of the price (ISO-8601).' }),
    freshness: Type.Ref(FreshnessSchema, {
      description:
        "How fresh the price is: from Yahoo's regularMarketTime against its currentTradingPeriod, end-of-day outside the regular session, prior-close in it before the first trade, unknown in it otherwise (Yahoo states no delay).",
    }),
  },
  { additionalProperties: false },
);

const OverviewResponse = Type.Record(Type.String(), OverviewEntrySchema, {
  $id: 'OverviewResponse',
  description: 'Keyed by instrument symbol (indices, a volatility index, commodities, crypto; set by OVERVIEW_SYMBOLS).',
});

/** The cached value holds the partial list too; callers see only the quotes. One view per cache entry. */
const views = new WeakMap<CacheEntry<OverviewValue>, CacheEntry<Record<string, OverviewEntry>>>();

function quotesView(result: CacheResult<OverviewValue>): CacheResult<Record<string, OverviewEntry>> {
  let entry = views.get(result.entry);
  if (entry === undefined) {
    entry = { ...result.entry, value: result.entry.value.quotes };
    views.set(result.entry, entry);
  }
  return { entry, status: result.status };
}

/** With OVERVIEW_SOURCE=none the route stays documented and answers 503. */
export function overviewRoute(app: FastifyInstance, overview: Configured<MarketOverview>): void {
  const load = async (revalidate = false) => use(overview).get({ revalidate });
  app.liveTopics.provide('overview', async (_arg, { revalidate }) => quotesView(await load(revalidate)));
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/overview',
    {
      schema: {
        operationId: 'getMarketOverview',
        summary: 'Market overview: indices, volatility, commodities and crypto',
        description:
          'Price, change and change percent against the previous daily close, as two-decimal strings, per instrument. ' +
          'One instrument failing never fails the overview: it is served stale if cached, else left out and named in the X-Partial header. ' +
          'Cached as a whole (fresh 60 s by default); see X-Cache and Age.',
        tags: ['market'],
        response: { 200: OverviewResponse, ...NOT_MODIFIED, ...errorResponses(401, 403, 429, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const result = await load();
      const { missing } = result.entry.value;
      if (missing.length > 0) reply.header('x-partial', missing.join(','));
      return sendCached(request, reply, quotesView(result));
    },
  );
}
