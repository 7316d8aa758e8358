// The broker responses, one shape whichever broker is behind them. These schemas document the API
// (OpenAPI) and validate the routes' own output in tests.
import { Type } from '@sinclair/typebox';
import { ASSET_CLASSES } from '../../broker/broker.js';
import { FreshnessSchema } from '../schemas.js';

const Num = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const Str = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const BrokerName = Type.Union([Type.Literal('ibkr'), Type.Literal('tastytrade'), Type.Literal('none')], {
  description: 'The broker behind these endpoints (BROKER).',
});

export const HealthResponse = Type.Object(
  {
    broker: BrokerName,
    status: Type.Union(
      [Type.Literal('connected'), Type.Literal('unauthenticated'), Type.Literal('disconnected'), Type.Literal('not_configured')],
      {
        description:
          'connected: data can be read. unauthenticated: the broker answers but has no usable session (gateway not logged in, or token refused). disconnected: nothing usable answers. not_configured: no broker is set up.',
      },
    ),
    authenticated: Type.Boolean(),
    connected: Type.Boolean({ description: 'The broker (or local gateway) answered.' }),
    checkedAt: Type.String({ format: 'date-time' }),
    latencyMs: Type.Integer({ minimum: 0, description: 'How long the check took.' }),
    message: Type.String({ description: 'What the state means and what to do about it.' }),
    proxy: Type.Optional(
      Type.String({
        description: 'The outbound proxy the broker is reached through (host:port, never its credentials); absent when direct.',
      }),
    ),
  },
  { additionalProperties: false, $id: 'BrokerHealthResponse' },
);

const Account = Type.Object(
  {
    accountId: Type.String(),
    name: Type.String({ description: 'Alias or nickname when set, else the account id.' }),
    type: Str("The broker's account type, e.g. INDIVIDUAL or Roth IRA."),
    currency: Str('Base currency.'),
  },
  { additionalProperties: false },
);

export const AccountsResponse = Type.Object(
  { accounts: Type.Array(Account) },
  { additionalProperties: false, $id: 'BrokerAccountsResponse' },
);

const Position = Type.Object(
  {
    accountId: Type.String(),
    symbol: Type.String(),
    description: Str("The broker's contract description when it differs from the symbol (options, futures)."),
    assetClass: Type.Union(ASSET_CLASSES.map((c) => Type.Literal(c))),
    quantity: Type.Number({ description: 'Signed: negative when short.' }),
    averageCost: Num('Average price paid per unit (not multiplied by the contract multiplier).'),
    marketPrice: Num('Current mark or last price per unit.'),
    marketValue: Num('Signed market value including the contract multiplier.'),
    unrealizedPnl: Num('Unrealised profit or loss.'),
    currency: Str('Currency of the prices.'),
    freshness: Type.Ref(FreshnessSchema, {
      description:
        "How fresh marketPrice is: IBKR's positions say nothing of it (unknown); Tastytrade's mark is unknown too, and its previous close, used when no mark came, is prior-close.",
    }),
  },
  { additionalProperties: false },
);

export const PositionsResponse = Type.Object(
  { positions: Type.Array(Position, { description: 'Every position of every account, all pages.' }) },
  { additionalProperties: false, $id: 'BrokerPositionsResponse' },
);

const Quote = Type.Object(
  {
    symbol: Type.String(),
    last: Num('Last price (freshness.kind says whether it is a trade, a frozen value or the previous close).'),
    bid: Num('Best bid.'),
    ask: Num('Best ask.'),
    bidSize: Num('Size at the bid.'),
    askSize: Num('Size at the ask.'),
    change: Num('Change against the previous close.'),
    changePercent: Num('Change in percent against the previous close.'),
    volume: Num("Today's volume."),
    updatedAt: Str('When the broker last updated this quote (ISO 8601).'),
    freshness: Type.Ref(FreshnessSchema, {
      description:
        "How fresh the values are, as the broker's answer says: IBKR's market data availability (6509) and the last price's prefix (C: the previous close, H: halted), Tastytrade's token level (api: realtime, demo: delayed) or its halt flag.",
    }),
  },
  { additionalProperties: false },
);

export const QuotesResponse = Type.Object(
  {
    quotes: Type.Record(Type.String(), Quote, { description: 'Keyed by upper-case symbol.' }),
    missing: Type.Array(Type.String(), { description: 'Requested symbols the broker does not know.' }),
  },
  { additionalProperties: false, $id: 'BrokerQuotesResponse' },
);
