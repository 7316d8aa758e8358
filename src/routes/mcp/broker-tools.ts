// The broker tools: GET /api/broker/health, /accounts, /positions and /quotes, through the same service and with
// the same answer schemas. Listed and answered only for callers the broker routes admit (mcp-access.ts): the
// server hides them from everyone else and refuses a call before any broker read.
import { Type } from '@sinclair/typebox';
import { MAX_SYMBOLS, parseSymbolList } from '../../core/symbol-list.js';
import { AccountsResponse, HealthResponse, PositionsResponse, QuotesResponse } from '../broker/schemas.js';
import { Source, Symbols } from './schemas.js';
import { answer, tool } from './tool.js';

const NO_ARGUMENTS = Type.Object({}, { additionalProperties: false });

export const getBrokerHealth = tool({
  name: 'get_broker_health',
  title: 'Broker connection',
  description: 'Whether the brokerage connection works, and what to do when it does not. Use it when a broker tool fails.',
  input: NO_ARGUMENTS,
  output: HealthResponse.properties,
  broker: true,
  async run(_args, { deps }) {
    const { entry } = await deps.brokerData.health();
    return answer({ content: { ...entry.value }, text: (c) => `${c.broker}: ${c.status}. ${c.message}` });
  },
});

export const getBrokerAccounts = tool({
  name: 'get_broker_accounts',
  title: 'Brokerage accounts',
  description: "Every brokerage account the connection can read: id, name, type and currency. Use it to tell the user's accounts apart.",
  input: NO_ARGUMENTS,
  output: AccountsResponse.properties,
  broker: true,
  async run(_args, { deps }) {
    const { entry } = await deps.brokerData.accounts();
    return answer({
      content: entry.value,
      rows: { path: ['accounts'], hint: () => 'The rest are not sent to agents; the REST route /api/broker/accounts has them all.' },
      text: (c) => `${c.accounts.length} accounts: ${c.accounts.map((a) => `${a.accountId} (${a.name})`).join(', ')}.`,
    });
  },
});

export const getBrokerPositions = tool({
  name: 'get_broker_positions',
  title: 'Open positions',
  description:
    "Every open position of every brokerage account, with quantity, cost, market value and unrealised profit. Use it for the user's holdings.",
  input: NO_ARGUMENTS,
  output: PositionsResponse.properties,
  broker: true,
  async run(_args, { deps }) {
    const { entry } = await deps.brokerData.positions();
    return answer({
      content: entry.value,
      rows: { path: ['positions'], hint: () => 'The rest are not sent to agents; the REST route /api/broker/positions has them all.' },
      text: (c) => `${c.positions.length} positions: ${c.positions.map((p) => `${p.symbol} ${p.quantity}`).join(', ')}.`,
    });
  },
});

export const getBrokerQuotes = tool({
  name: 'get_broker_quotes',
  title: 'Broker quotes',
  description: `Real-time quotes from the broker's own feed for 1 to ${MAX_SYMBOLS} symbols: last, bid, ask, sizes, change and volume. Use it when the user's broker data is wanted rather than the public quote.`,
  input: Type.Object({ symbols: Symbols(MAX_SYMBOLS, 'Ticker symbols, e.g. ["AAPL", "SPY"].') }, { additionalProperties: false }),
  output: { ...QuotesResponse.properties, source: Source },
  broker: true,
  async run({ symbols }, { deps }) {
    const { result, source } = await deps.brokerData.quotes(parseSymbolList(symbols.join(',')));
    return answer({
      content: { ...result.entry.value, source },
      rows: { path: ['quotes'], hint: () => 'Ask for fewer symbols at a time.' },
      text: (c) =>
        `${Object.values(c.quotes)
          .map((q) => `${q.symbol} ${q.last ?? '?'} (bid ${q.bid ?? '?'}, ask ${q.ask ?? '?'}, ${q.freshness.kind})`)
          .join('; ')}${c.missing.length === 0 ? '' : `; unknown: ${c.missing.join(', ')}`}; from ${c.source}.`,
    });
  },
});
