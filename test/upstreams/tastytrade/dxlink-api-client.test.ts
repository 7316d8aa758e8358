// dxFeed's own DXLink client (@dxfeed/dxlink-api, which Tastytrade's SDK wraps) against the simulated
// socket: a client we did not write gets COMPACT quotes from it, which holds the simulator to the protocol.
// The same run measures why the service does not use that client (tastytrade-quote-stream.ts): after its
// socket is closed while unauthorised it forgets the token and never connects again.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import {
  DXLinkAuthState,
  DXLinkConnectionState,
  DXLinkFeed,
  DXLinkWebSocketClient,
  FeedContract,
  FeedDataFormat,
} from '@dxfeed/dxlink-api';
import { createTastytradeSimulator } from '../../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { eventually } from '../../stream/sse-client.js';

/** The simulator, dxFeed's client (not connected yet), and a quote token the simulator issued. */
async function setup(t: TestContext) {
  const sim = createTastytradeSimulator({ clientSecret: 's', refreshToken: 'r', sessionAt: () => 'regular' });
  await sim.listen();
  const client = new DXLinkWebSocketClient({ logLevel: 0 as never });
  t.after(async () => {
    client.close();
    await sim.close();
  });
  return { sim, client, ...(await quoteToken(sim.origin)) };
}

async function quoteToken(origin: string): Promise<{ token: string; url: string }> {
  const auth = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'user-agent': 't/1', 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'r', client_secret: 's' }),
  });
  const { access_token } = (await auth.json()) as { access_token: string };
  const res = await fetch(`${origin}/api-quote-tokens`, { headers: { 'user-agent': 't/1', authorization: `Bearer ${access_token}` } });
  const { data } = (await res.json()) as { data: { token: string; 'dxlink-url': string } };
  return { token: data.token, url: data['dxlink-url'] };
}

test("dxFeed's client reads COMPACT Quote, Trade and Summary events from the simulator, NaN included", async (t) => {
  const { client, token, url } = await setup(t);
  client.connect(url);
  client.setAuthToken(token);
  const feed = new DXLinkFeed(client, FeedContract.AUTO);
  feed.configure({
    acceptAggregationPeriod: 0.1,
    acceptDataFormat: FeedDataFormat.COMPACT,
    acceptEventFields: {
      Quote: ['eventType', 'eventSymbol', 'bidPrice', 'askPrice', 'bidSize', 'askSize'],
      Trade: ['eventType', 'eventSymbol', 'price', 'dayVolume', 'size'],
      Summary: ['eventType', 'eventSymbol', 'prevDayClosePrice'],
    },
  });
  const events: Record<string, unknown>[] = [];
  feed.addEventListener((received) => events.push(...(received as unknown as Record<string, unknown>[])));
  feed.addSubscriptions(...['AAPL', 'BTC/USD:CXTALP'].flatMap((symbol) => ['Quote', 'Trade', 'Summary'].map((type) => ({ type, symbol }))));
  await eventually(
    () => ['Quote', 'Trade', 'Summary'].every((type) => events.some((e) => e.eventType === type && e.eventSymbol === 'AAPL')),
    'every event type of AAPL',
    5_000,
  );
  assert.equal(client.getAuthState(), DXLinkAuthState.AUTHORIZED);
  const aaplQuote = events.find((e) => e.eventType === 'Quote' && e.eventSymbol === 'AAPL') as Record<string, unknown>;
  assert.equal(typeof aaplQuote.bidPrice, 'number');
  await eventually(() => events.some((e) => e.eventType === 'Trade' && e.eventSymbol === 'BTC/USD:CXTALP'), 'a BTC trade', 5_000);
  const btc = events.find((e) => e.eventType === 'Trade' && e.eventSymbol === 'BTC/USD:CXTALP') as Record<string, unknown>;
  assert.equal(btc.dayVolume, 'NaN', 'the client passes "NaN" through as the string');
});

test("dxFeed's client, its token refused, closes and does not connect again (the measured reason for not using it)", async (t) => {
  const { sim, client, token, url } = await setup(t);
  sim.stream.faults.refuseAuth = true;
  client.connect(url);
  client.setAuthToken(token);
  await eventually(() => sim.stream.authRefusals >= 1, 'the refused AUTH', 5_000);
  // The server closes the refused socket (as the expired-token path does). A client that meant to come back
  // would go to CONNECTING (its reconnect); this one goes to NOT_CONNECTED, its end state, and stays there.
  const states: DXLinkConnectionState[] = [];
  client.addConnectionStateChangeListener((state) => states.push(state));
  sim.stream.faults.refuseAuth = false;
  sim.stream.dropAll();
  await eventually(() => states.length > 0, 'the client saw the close', 5_000);
  assert.deepEqual(states, [DXLinkConnectionState.NOT_CONNECTED]);
  assert.equal(sim.stream.accepted, 1);
});

test("dxFeed's client, its first upgrade refused (DXLink's intermittent 502), does not try again", async (t) => {
  const { sim, client, token, url } = await setup(t);
  sim.stream.faults.refuseUpgrade = true;
  const states: DXLinkConnectionState[] = [];
  client.addConnectionStateChangeListener((state) => states.push(state));
  client.connect(url);
  client.setAuthToken(token);
  await eventually(() => states.at(-1) === DXLinkConnectionState.NOT_CONNECTED, 'the client gave up', 5_000);
  assert.deepEqual(states, [DXLinkConnectionState.CONNECTING, DXLinkConnectionState.NOT_CONNECTED]);
});
