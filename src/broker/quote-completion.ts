// A streamed quote is built from the fields the feed has sent so far; a snapshot knows every field the
// broker has. Until the stream has sent them all, a snapshot completes it: the stream's values win (they
// are newer), the snapshot fills the rest, and a change the stream has not sent is taken against the
// previous close the snapshot implies (last - change), so it stays the change of the streamed last price.
// The streamed quote's freshness stands: it is the newer statement of the same account's entitlement.
import type { BrokerQuote } from './broker.js';
import { changeFrom, roundTo } from './numbers.js';

/** Every field a snapshot gives is known: last, bid, ask, both sizes, volume, change and percent change. */
export function isComplete(quote: BrokerQuote): boolean {
  return (
    quote.last !== null &&
    quote.bid !== null &&
    quote.ask !== null &&
    quote.bidSize !== null &&
    quote.askSize !== null &&
    quote.volume !== null &&
    quote.change !== null &&
    quote.changePercent !== null
  );
}

/** The streamed quote with its unknown fields taken from `snapshot`. */
export function completeQuote(streamed: BrokerQuote, snapshot: BrokerQuote): BrokerQuote {
  const pick = <K extends keyof BrokerQuote>(key: K): BrokerQuote[K] => streamed[key] ?? snapshot[key];
  let { change, changePercent } = streamed;
  if ((change === null || changePercent === null) && snapshot.last !== null && snapshot.change !== null) {
    const previousClose = roundTo(snapshot.last - snapshot.change, 6);
    const computed = changeFrom(streamed.last ?? snapshot.last, previousClose);
    change ??= computed.change;
    changePercent ??= computed.changePercent;
  }
  return {
    symbol: streamed.symbol,
    last: pick('last'),
    bid: pick('bid'),
    ask: pick('ask'),
    bidSize: pick('bidSize'),
    askSize: pick('askSize'),
    change: change ?? snapshot.change,
    changePercent: changePercent ?? snapshot.changePercent,
    volume: pick('volume'),
    updatedAt: streamed.updatedAt ?? snapshot.updatedAt,
    freshness: streamed.freshness,
  };
}

/** The same market values, of the same kind (the time aside): a tick that changed nothing is not news. */
export function sameQuoteValues(a: BrokerQuote, b: BrokerQuote): boolean {
  return (
    a.last === b.last &&
    a.bid === b.bid &&
    a.ask === b.ask &&
    a.bidSize === b.bidSize &&
    a.askSize === b.askSize &&
    a.change === b.change &&
    a.changePercent === b.changePercent &&
    a.volume === b.volume &&
    // The same prices turning frozen at the close, or halted, are news.
    a.freshness.kind === b.freshness.kind
  );
}

/** Some market value is known: a frame without any is no quote yet. */
export function hasQuoteValues(q: BrokerQuote): boolean {
  return [q.last, q.bid, q.ask, q.bidSize, q.askSize, q.change, q.changePercent, q.volume].some((v) => v !== null);
}
