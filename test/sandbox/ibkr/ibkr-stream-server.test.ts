// The simulated gateway's websocket, as recorded gateways behave (test/fixtures/recorded/ibkr/ws-*):
// authorisation by cookie or session value, the greeting, the heartbeat, four tic replies, the first
// frame twice then deltas, ticks only in sessions, the subscription that ends after its lifetime while
// the heartbeat goes on, code 1000 at connect without a brokerage session, and the faults.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { contractBySymbol } from '../../../src/sandbox/ibkr/ibkr-contracts.js';
import type { MarketSession } from '../../../src/sandbox/ibkr/ibkr-market.js';
import { createIbkrSimulator, type IbkrSimulator, type IbkrSimulatorOptions } from '../../../src/sandbox/ibkr/ibkr-simulator.js';
import { Agent, request } from 'undici';
import { busiestSymbols, GatewaySocket, isMarketData } from '../../helpers/ibkr-socket.js';

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

/** GET, or POST `body` as JSON, to the simulator's own TLS port. */
async function fetchInsecure(url: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await request(url, {
    method: body === undefined ? 'GET' : 'POST',
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: insecure,
  });
  return { status: res.statusCode, json: await res.body.json() };
}

const FIELDS = '{"fields":["31","82","83","84","85","86","87","88","7295","7741"]}';

async function start(t: TestContext, options: IbkrSimulatorOptions = {}): Promise<IbkrSimulator> {
  const sim = await createIbkrSimulator({ pacing: false, stream: { heartbeatMs: 100 }, ...options });
  await sim.listen();
  t.after(() => sim.close());
  return sim;
}

/** The conid that ticks most often. */
const busiest = (sim: IbkrSimulator) => contractBySymbol(busiestSymbols(sim)[0]!)!.conid;

test('the cookie /tickle sets authorises the upgrade: greeting, accounts, status, then a heartbeat', async (t) => {
  const sim = await start(t);
  const socket = await GatewaySocket.open(t, sim);
  await socket.until((f) => f.some((x) => x.hb !== undefined), 'a heartbeat');
  assert.deepEqual(
    socket.frames.slice(0, 3).map((f) => f.topic),
    ['system', 'act', 'sts'],
  );
  assert.equal((socket.frames[2]!.args as { authenticated: boolean }).authenticated, true);
});

test('without the cookie the gateway waits for the session value, and refuses a wrong one', async (t) => {
  const sim = await start(t);
  const socket = await GatewaySocket.open(t, sim, { cookie: false });
  await socket.until((f) => f.length >= 1, 'the first frame');
  assert.deepEqual(socket.frames[0], { message: 'waiting for session' });
  socket.send('{"session":"not-the-session"}');
  await socket.until((f) => f.some((x) => x.topic === 'sts'), 'a status');
  assert.deepEqual(socket.frames[1], { topic: 'sts', args: { authenticated: false } });
  socket.send(JSON.stringify({ session: sim.sessionId }));
  await socket.until(
    (f) => f.some((x) => x.topic === 'sts' && (x.args as { authenticated?: boolean }).authenticated === true),
    'authorised',
  );
});

test('a subscription: the first frame twice, then on each tick only what changed; tic answered four times', async (t) => {
  const sim = await start(t, { sessionAt: () => 'regular' });
  const socket = await GatewaySocket.open(t, sim);
  const conid = busiest(sim);
  socket.send(`smd+${conid}+${FIELDS}`);
  socket.send('tic');
  await socket.until((f) => f.filter(isMarketData).length >= 8, 'ticks');
  const market = socket.frames.filter(isMarketData);
  assert.deepEqual({ ...market[0], _updated: 0 }, { ...market[1], _updated: 0 }, 'the first frame, repeated');
  for (const code of ['31', '84', '86', '7741']) assert.ok(market[0]![code] !== undefined, `first frame has ${code}`);
  assert.equal(typeof market[0]!['83'], 'number', 'the change percent is a JSON number, as recorded');
  // The prior close and the open do not change within a session: later frames never repeat them.
  assert.deepEqual(
    market.slice(2).filter((f) => f['7741'] !== undefined || f['7295'] !== undefined),
    [],
    'later frames carry only the fields that changed',
  );
  assert.equal(socket.frames.filter((f) => f.topic === 'tic').length, 4);
  const spacing = (market.at(-1)!._updated as number) - (market[2]!._updated as number);
  assert.ok(spacing / (market.length - 3) < 1_000, `several ticks a second (${spacing} ms for ${market.length - 3})`);
});

test('no ticks outside the sessions: the first frame only, frozen ("ZB", no prefix; as recorded on a Saturday), or the previous close on a delayed account', async (t) => {
  let session: MarketSession = 'closed';
  const sim = await start(t, { sessionAt: () => session });
  const socket = await GatewaySocket.open(t, sim);
  socket.send(`smd+${busiest(sim)}+${FIELDS}`);
  await socket.until((f) => f.filter((x) => x.hb !== undefined).length >= 5, 'five heartbeats');
  const market = socket.frames.filter(isMarketData);
  assert.equal(market.length, 2, 'the first frame (twice) and nothing else');
  assert.match(String(market[0]!['31']), /^\d+\.\d{2}$/);
  assert.equal(market[0]!['6509'], 'ZB');
  // Without a market data subscription: delayed ("DPB") and the last price the previous close ("C", as recorded).
  sim.market.marketData = 'delayed';
  const delayed = await GatewaySocket.open(t, sim);
  delayed.send(`smd+${busiest(sim)}+${FIELDS}`);
  await delayed.until((f) => f.some(isMarketData), 'the first frame');
  const [first] = delayed.frames.filter(isMarketData);
  assert.deepEqual([first!['6509'], /^C\d+\.\d{2}$/.test(String(first!['31']))], ['DPB', true]);
  sim.market.marketData = 'realtime';
  session = 'regular';
  await socket.until((f) => f.filter(isMarketData).length > 2, 'ticks once the session opens');
});

test('a subscription ends after its lifetime while the heartbeat goes on; requesting it again revives it', async (t) => {
  const sim = await start(t, { sessionAt: () => 'regular', stream: { heartbeatMs: 100, subscriptionTtlMs: 600 } });
  const socket = await GatewaySocket.open(t, sim);
  const conid = busiest(sim);
  socket.send(`smd+${conid}+${FIELDS}`);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const expiredAt = socket.frames.length;
  await new Promise((resolve) => setTimeout(resolve, 600));
  assert.equal(socket.since(expiredAt, isMarketData).length, 0, 'no market data after the lifetime');
  assert.ok(socket.since(expiredAt, (f) => f.hb !== undefined).length >= 3, 'heartbeats go on');
  socket.send(`smd+${conid}+${FIELDS}`);
  await socket.until((f) => f.slice(expiredAt).filter(isMarketData).length >= 3, 'market data again');
});

test('code 1000 at connect without a brokerage session; 401 when logged out; the faults', async (t) => {
  const sim = await start(t);
  sim.setSession('no_session');
  assert.deepEqual(await (await GatewaySocket.open(t, sim, { cookie: false })).ended, { code: 1000 });
  sim.setSession('logged_out');
  assert.deepEqual(await (await GatewaySocket.open(t, sim, { cookie: false })).ended, { status: 401 });
  sim.setSession('connected');
  sim.stream.faults.refuseUpgrade = true;
  assert.deepEqual(await (await GatewaySocket.open(t, sim)).ended, { status: 503 });
  sim.stream.faults.refuseUpgrade = false;

  const socket = await GatewaySocket.open(t, sim);
  await socket.until((f) => f.some((x) => x.hb !== undefined), 'a heartbeat');
  sim.stream.faults.silent = true;
  const silentFrom = socket.frames.length;
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(socket.frames.length, silentFrom, 'a silent socket sends nothing, heartbeat included');
  sim.stream.faults.silent = false;
  sim.loseSessionSilently();
  await socket.until((f) => f.filter((x) => x.topic === 'sts').length >= 4, 'the status frames of a lost session');
  assert.deepEqual(
    socket.frames
      .filter((x) => x.topic === 'sts')
      .slice(1)
      .map((f) => f.args),
    [{ authenticated: false }, { competing: false }, { message: '' }],
  );
  sim.stream.dropAll();
  assert.equal((await socket.ended).code, 1006, 'dropped without a close frame');
});

test('the socket faults over HTTP (/__sandbox/stream), for the standalone sandbox', async (t) => {
  const sim = await start(t);
  const control = async (body?: unknown) => {
    const res = await fetchInsecure(`${sim.origin}/__sandbox/stream`, body);
    return { status: res.status, json: res.json as Record<string, unknown> };
  };
  const socket = await GatewaySocket.open(t, sim);
  await socket.until((f) => f.length >= 3, 'the greeting');
  assert.equal((await control()).json.openSockets, 1);
  assert.equal((await control({ action: 'drop' })).status, 200);
  assert.equal((await socket.ended).code, 1006);
  assert.deepEqual((await control({ refuseUpgrade: true })).json.faults, { refuseUpgrade: true, refuseSession: false, silent: false });
  assert.deepEqual(await (await GatewaySocket.open(t, sim)).ended, { status: 503 });
  assert.equal((await control({ action: 'nonsense' })).status, 400);
});
