// The topics of one stream request: `quote=IBM,MSFT&brokerQuotes=AAPL,SPY&overview=true&status=true`.
// Each topic is what one GET route answers; its id is the key under which one poller serves every viewer.
import { MAX_SYMBOLS, parseSymbolList } from '../core/symbol-list.js';
import { ApiError } from '../core/errors.js';

const TOPIC_KINDS = ['quote', 'brokerQuotes', 'overview', 'status'] as const;
export type TopicKind = (typeof TOPIC_KINDS)[number];

/**
 * Provider A allows 5 calls a minute: more quotes than that on one page cannot all be fresh, and each
 * symbol is its own poller.
 */
export const MAX_QUOTE_SYMBOLS = 10;

export interface Topic {
  kind: TopicKind;
  /** The symbol (quote), the sorted symbol list (brokerQuotes), LOCAL_STATUS or '' (status), or '' (overview). */
  arg: string;
  /** `quote:IBM`, `brokerQuotes:AAPL,SPY`, `overview`, `status`, `status:local`. */
  id: string;
}

/**
 * The status topic's argument for local viewers: their view (the whole status) is a topic apart from the public
 * one, so that no viewer is ever sent the other view's events.
 */
export const LOCAL_STATUS = 'local';

export interface StreamQuery {
  quote?: string;
  brokerQuotes?: string;
  overview?: boolean;
  status?: boolean;
}

/** @internal */
export function topic(kind: TopicKind, arg = ''): Topic {
  return { kind, arg, id: arg === '' ? kind : `${kind}:${arg}` };
}

/** Every topic asked for, or a 400 before the stream starts; `localViewer`: the status topic is the local view. */
export function parseTopics(query: StreamQuery, localViewer: () => boolean = () => false): Topic[] {
  const topics: Topic[] = [];
  if (query.quote !== undefined) {
    const symbols = parseSymbolList(query.quote, 'quote');
    if (symbols.length > MAX_QUOTE_SYMBOLS) {
      throw new ApiError('INVALID_PARAMETER', `quote: at most ${MAX_QUOTE_SYMBOLS} symbols per stream (got ${symbols.length})`);
    }
    for (const symbol of symbols) topics.push(topic('quote', symbol));
  }
  if (query.brokerQuotes !== undefined) topics.push(topic('brokerQuotes', parseSymbolList(query.brokerQuotes, 'brokerQuotes').join(',')));
  if (query.overview === true) topics.push(topic('overview'));
  if (query.status === true) topics.push(topic('status', localViewer() ? LOCAL_STATUS : ''));
  if (topics.length === 0) {
    throw new ApiError(
      'MISSING_PARAMETER',
      `no topic: ask for quote=SYM,…, brokerQuotes=SYM,… (at most ${MAX_SYMBOLS}), overview=true or status=true`,
    );
  }
  return topics;
}
