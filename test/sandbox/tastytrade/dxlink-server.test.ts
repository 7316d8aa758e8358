// The simulated DXLink socket's manners, seen from a raw websocket: UNAUTHORIZED after SETUP, then
// AUTHORIZED only for a token /api-quote-tokens issued; a silent client timed out with ERROR TIMEOUT; an
// overlong subscription closed with 1009; several ticks a second for a busy stock in COMPACT; the faults
// switched over HTTP at /__sandbox/stream.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import WebSocket from 'ws';
import { createTastytradeSimulator, type TastytradeSimulator } from '../../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { busiestStocks } from '../../helpers/tastytrade-stream.js';
import { eventually } from '../../stream/sse-client.js';

type Frame = Record<string, unknown>;

async function start(t: TestContext): Promise<TastytradeSimulator> {
  const sim = createTastytradeSimulator({ clientSecret: 's', refreshToken: 'r', sessionAt: () => 'regular' });
  await sim.listen();
  t.after(() => sim.close());
  return sim;
}

async function quoteToken(sim: TastytradeSimulator): Promise<{ token: string; url: string }> {
  const auth = await fetch(`${sim.origin}/oauth/token`, {
    method: 'POST',
    headers: { 'user-agent': 't/1', 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'r', client_secret: 's' }),
  });
  const { access_token } = (await auth.json()) as { access_token: string };
  const res = await fetch(`${sim.origin}/api-quote-tokens`, { headers: { 'user-agent': 't/1', authorization: `Bearer ${access_token}` } });
  const { data } = (await res.json()) as { data: { token: string; 'dxlink-url': string } };
  return { token: data.token, url: data['dxlink-url'] };
}

/** An open socket collecting the server's frames, and its close code once closed. */
async function open(t: TestContext, url: string): Promise<{ ws: WebSocket; frames: Frame[]; closed: { code?: number } }> {
  const ws = new WebSocket(url);
  const frames: Frame[] = [];
  const closed: { code?: number } = {};
  ws.on('message', (data) => frames.push(JSON.parse(data.toString()) as Frame));
  ws.on('close', (code) => {
    closed.code = code;
  });
  t.after(() => ws.terminate());
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { ws, frames, closed };
}

const send = (ws: WebSocket, message: Frame) => ws.send(JSON.stringify(message));
const SETUP = { type: 'SETUP', channel: 0, version: '0.1-test', keepaliveTimeout: 60, acceptKeepaliveTimeout: 60 };

/** SETUP, AUTH with `token`, feed channel 1 in COMPACT with `fields` per event type. */
function openFeed(ws: WebSocket, token: string, fields: Record<string, string[]>): void {
  send(ws, SETUP);
  send(ws, { type: 'AUTH', channel: 0, token });
  send(ws, { type: 'CHANNEL_REQUEST', channel: 1, service: 'FEED', parameters: { contract: 'AUTO' } });
  send(ws, { type: 'FEED_SETUP', channel: 1, acceptDataFormat: 'COMPACT', acceptEventFields: fields });
}

test('SETUP answered by SETUP and UNAUTHORIZED; an unknown token stays UNAUTHORIZED, an issued one is AUTHORIZED', async (t) => {
  const sim = await start(t);
  const { token, url } = await quoteToken(sim);
  const { ws, frames } = await open(t, url);
  send(ws, SETUP);
  await eventually(() => frames.length >= 2, 'the setup answers');
  assert.deepEqual(
    frames.map((f) => [f.type, f.state]),
    [
      ['SETUP', undefined],
      ['AUTH_STATE', 'UNAUTHORIZED'],
    ],
  );
  send(ws, { type: 'CHANNEL_REQUEST', channel: 1, service: 'FEED', parameters: { contract: 'AUTO' } });
  send(ws, { type: 'AUTH', channel: 0, token: 'not-issued' });
  await eventually(() => frames.length >= 4, 'the refusals');
  assert.deepEqual(frames[2], { type: 'ERROR', channel: 1, error: 'UNAUTHORIZED', message: 'Not authorized' });
  assert.deepEqual(frames[3], { type: 'AUTH_STATE', channel: 0, state: 'UNAUTHORIZED' });
  send(ws, { type: 'AUTH', channel: 0, token });
  await eventually(() => frames.some((f) => f.state === 'AUTHORIZED'), 'authorised');
  assert.equal(sim.stream.authRefusals, 1);
});

test('a client silent past its keepalive timeout gets ERROR TIMEOUT and is closed', async (t) => {
  const sim = await start(t);
  const { url } = await quoteToken(sim);
  const { ws, frames, closed } = await open(t, url);
  send(ws, { ...SETUP, keepaliveTimeout: 1 });
  await eventually(() => closed.code !== undefined, 'closed by the server', 5_000);
  assert.equal(frames.at(-1)?.error, 'TIMEOUT');
  assert.equal(sim.stream.timeouts, 1);
});

test('busy stocks tick several times a second in COMPACT; an overlong subscription closes the socket with 1009', async (t) => {
  const sim = await start(t);
  const { token, url } = await quoteToken(sim);
  const { ws, frames, closed } = await open(t, url);
  openFeed(ws, token, { Quote: ['eventType', 'eventSymbol', 'bidPrice', 'askPrice', 'bidSize', 'askSize'] });
  const busy = busiestStocks(sim).slice(0, 3);
  send(ws, { type: 'FEED_SUBSCRIPTION', channel: 1, add: busy.map((symbol) => ({ type: 'Quote', symbol })) });
  const quotes = () => frames.filter((f) => f.type === 'FEED_DATA');
  await eventually(() => quotes().length >= 10, 'ten quote frames', 5_000);
  const first = frames.findIndex((f) => f.type === 'FEED_DATA');
  assert.deepEqual(frames[first - 1]?.eventFields, { Quote: ['eventType', 'eventSymbol', 'bidPrice', 'askPrice', 'bidSize', 'askSize'] });
  for (const f of quotes()) {
    const [type, values] = f.data as [string, unknown[]];
    assert.equal(type, 'Quote');
    assert.equal(values.length % 6, 0, 'whole events');
  }
  const longSymbols = Array.from({ length: 3_000 }, (_, i) => ({ type: 'Quote', symbol: `SYMBOL${i}` }));
  send(ws, { type: 'FEED_SUBSCRIPTION', channel: 1, add: longSymbols });
  await eventually(() => closed.code !== undefined, 'closed', 5_000);
  assert.equal(closed.code, 1009);
});

test('/__sandbox/stream switches the faults and shows the counters', async (t) => {
  const sim = await start(t);
  const control = async (body?: Frame) => {
    const res = await fetch(`${sim.origin}/__sandbox/stream`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Frame };
  };
  assert.deepEqual((await control({ refuseUpgrade: true })).body.faults, { refuseUpgrade: true, refuseAuth: false, silent: false });
  const { url } = await quoteToken(sim);
  const refused = new WebSocket(url);
  const status = await new Promise<number>((resolve) => refused.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
  assert.equal(status, 502);
  await control({ refuseUpgrade: false });
  const { ws, closed } = await open(t, url);
  send(ws, SETUP);
  assert.equal((await control({ action: 'drop' })).status, 200);
  await eventually(() => closed.code !== undefined, 'dropped');
  assert.equal((await control({ action: 'nonsense' })).status, 400);
  const counters = (await control()).body;
  assert.equal(counters.accepted, 1);
  assert.equal(counters.openSockets, 0);
});

test("a demo token (the sandbox environment's) names /delayed, whose trades are a quarter of an hour behind, their times too", async (t) => {
  const sim = await start(t);
  sim.level = 'demo';
  const { token, url } = await quoteToken(sim);
  assert.equal(new URL(url).pathname, '/delayed');
  const { ws, frames } = await open(t, url);
  openFeed(ws, token, { Trade: ['eventType', 'eventSymbol', 'price', 'time'] });
  const [symbol] = busiestStocks(sim);
  send(ws, { type: 'FEED_SUBSCRIPTION', channel: 1, add: [{ type: 'Trade', symbol }] });
  const trades = () => frames.filter((f) => f.type === 'FEED_DATA').map((f) => (f.data as [string, unknown[]])[1]);
  await eventually(() => trades().length >= 1, 'a trade', 5_000);
  const [, , price, time] = trades()[0] as [string, string, number, number];
  const behindMs = Date.now() - time;
  assert.ok(behindMs >= 15 * 60_000 && behindMs < 16 * 60_000, `the trade is ${behindMs} ms old`);
  // The price the market had then.
  assert.equal(price, sim.market.quote({ ours: symbol as string, kind: 'equity' }, time).last);
  // The level switched at /__sandbox/tastytrade, and refused when it is none of the two.
  const control = (body: unknown) =>
    fetch(`${sim.origin}/__sandbox/tastytrade`, { method: 'POST', body: JSON.stringify(body) }).then((res) => res.status);
  assert.equal(await control({ level: 'api' }), 200);
  assert.equal(sim.level, 'api');
  assert.equal(await control({ level: 'live' }), 400);
});
