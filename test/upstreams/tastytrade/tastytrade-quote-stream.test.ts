// TastytradeQuoteStream against the simulated Tastytrade API and its DXLink socket on loopback: the quote
// token from /api-quote-tokens, SETUP/AUTH/channel/FEED_SETUP, events merged into quotes, chunked
// subscriptions, keepalives, unsubscription, the token renewed before its end on the open socket, and every
// fault reconnecting with back-off. Timings are shortened (seconds for DXLink's minute); the defaults are
// the production ones.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import type { StreamedQuote } from '../../../src/broker/quote-stream.js';
import {
  createTastytradeSimulator,
  type TastytradeSimulator,
  type TastytradeSimulatorOptions,
} from '../../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { QUOTE_TOKEN_LIFETIME_MS } from '../../../src/upstreams/tastytrade/parse-quote-token.js';
import { TastytradeBroker } from '../../../src/upstreams/tastytrade/tastytrade-broker.js';
import { TastytradeQuoteStream, type TastytradeQuoteStreamOptions } from '../../../src/upstreams/tastytrade/tastytrade-quote-stream.js';
import { eventually } from '../../stream/sse-client.js';

const logger = pino({ level: 'silent' });

interface Setup {
  sim: TastytradeSimulator;
  broker: TastytradeBroker;
  stream: TastytradeQuoteStream;
  updates: StreamedQuote[];
}

async function setup(
  t: TestContext,
  options: { sim?: Partial<TastytradeSimulatorOptions>; stream?: Partial<TastytradeQuoteStreamOptions> } = {},
): Promise<Setup> {
  const sim = createTastytradeSimulator({ clientSecret: 's', refreshToken: 'r', sessionAt: () => 'regular', ...options.sim });
  await sim.listen();
  const broker = new TastytradeBroker({ url: sim.origin, clientSecret: 's', refreshToken: 'r', timeoutMs: 2_000, logger });
  const stream = new TastytradeQuoteStream({
    session: broker,
    logger,
    keepaliveTimeoutSec: 1,
    acceptKeepaliveTimeoutSec: 1,
    backOffMs: { first: 50, max: 400 },
    watchMs: 50,
    authTimeoutMs: 1_000,
    ...options.stream,
  });
  const updates: StreamedQuote[] = [];
  stream.onQuote((u) => updates.push(u));
  t.after(async () => {
    await stream.close();
    await broker.close();
    await sim.close();
  });
  return { sim, broker, stream, updates };
}

const connected = (stream: TastytradeQuoteStream) => eventually(() => stream.status().state === 'connected', 'connected', 8_000);

test('a quote token, one socket, Quote/Trade/Summary merged into complete quotes with the change against the previous close', async (t) => {
  const { sim, stream, updates } = await setup(t);
  stream.start();
  stream.subscribe(['AAPL', 'BRK.B', 'NOSUCH']);
  await eventually(() => stream.latest('AAPL')?.complete === true && stream.latest('BRK.B')?.complete === true, 'complete quotes', 5_000);
  assert.equal(stream.latest('NOSUCH'), undefined);
  assert.equal(sim.count('/api-quote-tokens'), 1);
  assert.deepEqual([...sim.stream.subscriptions()].sort(), ['AAPL', 'BRK/B', 'NOSUCH']);
  const aapl = stream.latest('AAPL') as StreamedQuote;
  for (const field of ['last', 'bid', 'ask', 'bidSize', 'askSize', 'change', 'changePercent', 'volume'] as const)
    assert.equal(typeof aapl.quote[field], 'number', field);
  assert.equal(aapl.quote.updatedAt, new Date(aapl.tickAt).toISOString(), 'updatedAt is the tick time');
  // The same meaning as a snapshot: the change is the last price less the previous close the REST answer gives.
  const rest = await fetch(`${sim.origin}/market-data/by-type?equity=AAPL`, {
    headers: { 'user-agent': 't/1', authorization: `Bearer ${sim.lastToken}` },
  });
  const item = ((await rest.json()) as { data: { items: Record<string, string>[] } }).data.items[0] as Record<string, string>;
  const last = aapl.quote.last as number;
  assert.ok(Math.abs((aapl.quote.change as number) - (last - Number(item['prev-close']))) < 1e-6, 'change against the previous close');
  assert.ok(updates.every((u) => u.symbol === 'AAPL' || u.symbol === 'BRK.B'));
  assert.deepEqual(
    { ...stream.status(), lastTickAgeMs: null },
    { broker: 'tastytrade', state: 'connected', subscriptions: 3, lastTickAgeMs: null, reconnects: 0, lastError: null },
  );
  assert.equal(sim.stream.accepted, 1);
});

test('crypto streams with "NaN" trade sizes and volume: a quote without volume, not complete', async (t) => {
  const { stream } = await setup(t);
  stream.start();
  stream.subscribe(['BTC-USD']);
  await eventually(() => stream.latest('BTC-USD')?.quote.last !== null && stream.latest('BTC-USD') !== undefined, 'a BTC quote', 5_000);
  const btc = stream.latest('BTC-USD') as StreamedQuote;
  assert.equal(btc.quote.volume, null);
  assert.equal(btc.complete, false, 'a snapshot completes it');
});

test('subscriptions are sent in chunks no longer than the limit, and removed when nobody needs them', async (t) => {
  const { sim, stream } = await setup(t, { stream: { maxSubscriptionChars: 400 } });
  const symbols = ['AAPL', 'MSFT', 'SPY', 'IBM', 'AMZN', 'TSLA', 'NVDA', 'QQQ', 'KO', 'PEP', 'JPM', 'V'];
  stream.start();
  stream.subscribe(symbols);
  await connected(stream);
  await eventually(() => [...sim.stream.subscriptions()].length === symbols.length, 'every symbol subscribed', 5_000);
  assert.ok(sim.stream.subscriptionMessages >= 3, `messages: ${sim.stream.subscriptionMessages}`);
  assert.ok(sim.stream.longestSubscriptionMessage <= 400, `longest: ${sim.stream.longestSubscriptionMessage}`);
  stream.unsubscribe(symbols.slice(2));
  await eventually(() => [...sim.stream.subscriptions()].length === 2, 'removed upstream', 5_000);
  assert.equal(stream.status().subscriptions, 2);
  assert.equal(stream.latest('SPY'), undefined);
});

test("keepalives keep the socket open past the server's timeout", async (t) => {
  const { sim, stream } = await setup(t);
  stream.start();
  stream.subscribe(['AAPL']);
  await connected(stream);
  await eventually(() => sim.stream.keepalivesReceived >= 6, 'keepalives over three timeouts', 8_000);
  assert.equal(sim.stream.timeouts, 0);
  assert.equal(sim.stream.accepted, 1, 'the same socket throughout');
});

test('the quote token is renewed before its 24 hours on the open socket (a second AUTH), the clock moved, no reconnect', async (t) => {
  // One wall clock for the simulator's tokens and the stream's renewal, moved by the test.
  let offset = 0;
  const now = () => Date.now() + offset;
  const { sim, stream } = await setup(t, { sim: { now }, stream: { now } });
  stream.start();
  stream.subscribe(['AAPL']);
  await connected(stream);
  assert.equal(stream.authsSent, 1);
  offset = 22 * 3_600_000;
  const keepalives = sim.stream.keepalivesReceived;
  await eventually(() => sim.stream.keepalivesReceived >= keepalives + 2, 'watch rounds at 22 h', 5_000);
  assert.equal(stream.authsSent, 1, 'not renewed 2 h before the end');
  offset = QUOTE_TOKEN_LIFETIME_MS - 30 * 60_000;
  await eventually(() => stream.authsSent >= 2, 'a renewal AUTH half an hour before the end', 5_000);
  // (The OAuth access token had expired on the moved clock too: refreshed on its 401, as for any call.)
  assert.equal(sim.stream.issuedTokens().length, 2);
  // Past the first token's end once DXLink holds the renewed one (an AUTH sent is not yet one received: DXLink's
  // expiry check could still find the first token on the socket): the socket lives on the renewed one.
  await eventually(() => sim.stream.authsAccepted === 2, 'the renewal accepted by DXLink', 5_000);
  offset = QUOTE_TOKEN_LIFETIME_MS + 60_000;
  const ticks = stream.latest('AAPL')?.tickAt ?? 0;
  await eventually(() => (stream.latest('AAPL')?.tickAt ?? 0) > ticks, 'ticks past the first token', 5_000);
  assert.equal(sim.stream.accepted, 1, 'the same socket throughout');
  assert.equal(sim.stream.authRefusals, 0);
  assert.equal(stream.status().state, 'connected');
});

test('a token left to expire under the socket: UNAUTHORIZED, and a new connection with a new token', async (t) => {
  let offset = 0;
  const now = () => Date.now() + offset;
  // Only DXLink's clock passes the token's end, so the stream has no renewal due and the token is left to expire.
  // (With both clocks at the end, a renewal AUTH that reaches DXLink before its expiry check keeps the socket.)
  const { sim, stream } = await setup(t, { sim: { now } });
  stream.start();
  stream.subscribe(['AAPL']);
  await connected(stream);
  offset = QUOTE_TOKEN_LIFETIME_MS + 1_000;
  await eventually(() => sim.stream.accepted === 2 && stream.status().state === 'connected', 'a new connection', 5_000);
  assert.equal(sim.stream.issuedTokens().length, 2, 'with a new token');
  assert.ok(stream.status().reconnects >= 1);
});

test('faults reconnect with back-off: drop, refused upgrade, refused AUTH (a new token), expired token, silent server', async (t) => {
  const { sim, stream } = await setup(t);
  stream.start();
  stream.subscribe(['AAPL']);
  await connected(stream);

  sim.stream.dropAll();
  await eventually(() => stream.status().reconnects >= 1, 'a reconnect after a drop', 5_000);
  await connected(stream);

  sim.stream.faults.refuseUpgrade = true;
  sim.stream.dropAll();
  await eventually(() => /HTTP 502/.test(stream.status().lastError ?? ''), 'the refusal seen', 5_000);
  sim.stream.faults.refuseUpgrade = false;
  await connected(stream);

  const tokens = sim.count('/api-quote-tokens');
  sim.stream.faults.refuseAuth = true;
  sim.stream.dropAll();
  await eventually(() => stream.status().state === 'unauthenticated', 'unauthenticated', 5_000);
  sim.stream.faults.refuseAuth = false;
  await connected(stream);
  assert.ok(sim.count('/api-quote-tokens') > tokens, 'a refused token is replaced');

  const beforeExpiry = sim.count('/api-quote-tokens');
  sim.stream.expireTokens();
  await eventually(() => sim.count('/api-quote-tokens') > beforeExpiry, 'a new token after the expiry', 5_000);
  await connected(stream);

  sim.stream.silenceOpenSockets();
  await eventually(() => /nothing from DXLink/.test(stream.status().lastError ?? ''), 'silence seen', 5_000);
  await connected(stream);
  const before = stream.latest('AAPL')?.tickAt ?? 0;
  await eventually(() => (stream.latest('AAPL')?.tickAt ?? 0) > before, 'ticks again', 5_000);
  assert.equal(sim.stream.openSockets, 1, 'one socket at a time');
});

test('no ticks for stocks outside their sessions: the subscription gives the last values once', async (t) => {
  const { sim, stream, updates } = await setup(t, { sim: { sessionAt: () => 'closed' } });
  stream.start();
  stream.subscribe(['AAPL']);
  await eventually(() => typeof stream.latest('AAPL')?.quote.last === 'number', 'the last values', 5_000);
  const frames = sim.stream.framesSent;
  const initial = updates.length;
  await eventually(() => sim.stream.keepalivesReceived >= 4, 'two seconds of keepalives', 5_000);
  assert.equal(sim.stream.framesSent, frames, 'no FEED_DATA while closed');
  assert.equal(updates.length, initial);
});
