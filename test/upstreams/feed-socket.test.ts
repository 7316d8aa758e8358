// FeedSocket, the broker feeds' one socket lifecycle, driving a toy protocol against a real `ws` server on
// loopback: the address and headers the protocol prepares, authorisation and its deadline, the server's
// silence reported then replaced, back-off with bounded jitter, idleness, the protocol's own losses, the
// socket's timers and renewals, and a stop that leaves nothing running. Time is node:test's mock clock, moved
// by the test (the sockets are real); the proxy test alone runs on the real clock, waiting on log lines.
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { type WebSocket, WebSocketServer } from 'ws';
import { OutboundRoutes } from '../../src/core/outbound-routes.js';
import { proxySettings } from '../../src/core/proxy-settings.js';
import { type FeedAddress, type FeedFailure, FeedSocket, type FeedSocketOptions } from '../../src/upstreams/feed-socket.js';
import { OutboundProxy } from '../../src/upstreams/outbound-proxy.js';
import { startForwardProxy } from '../helpers/forward-proxy.js';

/** In the address and the upgrade's headers: never in status or a log line. */
const SECRET = 'tok-5ecret-9f2c';
const AUTH_TIMEOUT_MS = 1_000;
const WATCH_MS = 100;
const IDLE_MS = 3_000;
const STALE_MS = 1_500;
const DEAD_MS = 2_500;
const BACK_OFF = { first: 1_000, max: 4_000 };
const LOST = 'toy feed lost; reconnecting';

interface ToyServer {
  url: string;
  wss: WebSocketServer;
  /** Whether it answers the AUTH with "authorised" (else it says nothing). */
  answers: boolean;
  requests: IncomingMessage[];
  /** The next connection's server side. */
  nextSocket(): Promise<WebSocket>;
  /** The next AUTH received (the client's socket is open, its deadline running). */
  nextAuth(): Promise<unknown>;
}

async function toyServer(t: TestContext, refuse?: number): Promise<ToyServer> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    ...(refuse === undefined ? {} : { verifyClient: (_info, done) => done(false, refuse) }),
  });
  await once(wss, 'listening');
  const server: ToyServer = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    wss,
    answers: true,
    requests: [],
    nextSocket: async () => ((await once(wss, 'connection')) as [WebSocket])[0],
    nextAuth: () => once(wss, 'auth'),
  };
  wss.on('connection', (socket, request) => {
    server.requests.push(request);
    socket.on('message', (data) => {
      if (data.toString() !== `auth:${SECRET}`) return;
      wss.emit('auth');
      if (server.answers) socket.send('authorised');
    });
  });
  t.after(async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });
  return server;
}

/** A protocol of three frames: `auth:<token>` out once open; `authorised`, `beat` and `refused` in. */
function toyFeed(t: TestContext, server: { url: string }, options: Partial<FeedSocketOptions> & { jitter?: number[] } = {}) {
  const logs: Record<string, unknown>[] = [];
  const events = new EventEmitter();
  const logger = pino(
    { level: 'info' },
    {
      write: (line: string) => {
        const record = JSON.parse(line) as Record<string, unknown>;
        logs.push(record);
        events.emit('log', record);
      },
    },
  );
  const { jitter: given = [], timings, ...rest } = options;
  const jitter = [...given];
  const toy = {
    wanted: true,
    prepared: 0,
    watched: 0,
    dropped: [] as boolean[],
    /** What prepare() answers; by default the server's address with the secret in it and in a header. */
    prepare: async (): Promise<FeedAddress | FeedFailure> => ({
      url: `${server.url}/feed?token=${SECRET}`,
      headers: { authorization: `Bearer ${SECRET}` },
    }),
    logs,
    events,
  };
  const link: FeedSocket = new FeedSocket(
    {
      wanted: () => toy.wanted,
      prepare: () => {
        toy.prepared += 1;
        return toy.prepare();
      },
      opened: () => link.send(`auth:${SECRET}`),
      frame: (text) => {
        link.heard();
        if (text === 'authorised') link.authorise();
        if (text === 'refused') link.lost('the toy server refused the token', true, 1000);
        events.emit(text);
      },
      watch: () => {
        toy.watched += 1;
      },
      dropped: (unauthenticated) => toy.dropped.push(unauthenticated),
    },
    {
      broker: 'ibkr',
      logger,
      words: {
        socket: 'the toy websocket',
        server: 'the toy server',
        notAuthorised: 'the toy websocket was not authorised in time',
        silent: (seconds) => `nothing from the toy server for ${seconds} s`,
        lost: LOST,
      },
      timings: { authTimeoutMs: AUTH_TIMEOUT_MS, backOffMs: BACK_OFF, watchMs: WATCH_MS, idleMs: IDLE_MS, ...timings },
      silence: () => ({ staleMs: STALE_MS, deadMs: DEAD_MS }),
      renewRetryMs: 60_000,
      random: () => jitter.shift() ?? 0,
      ...rest,
    },
  );
  t.after(async () => {
    await link.close();
    // Every socket fully closed before the next test: `ws` clears its close timer when the socket's TCP
    // connection ends, and on a later test's mock clock that clear would remove one of that test's timers.
    while (process.getActiveResourcesInfo().includes('TCPSocketWrap')) await new Promise(setImmediate);
    // No secret in anything the lifecycle says.
    assert.ok(!JSON.stringify(logs).includes(SECRET), 'no secret in a log line');
    assert.ok(!(link.status(0).lastError ?? '').includes(SECRET), 'no secret in status');
  });
  return { link, toy };
}

/** The status of a socket that is down and was never opened again. */
const down = (lastError: string | null) => ({
  broker: 'ibkr',
  state: 'disconnected',
  subscriptions: 0,
  lastTickAgeMs: null,
  reconnects: 0,
  lastError,
});

function mockClock(t: TestContext): (ms: number) => void {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 1_700_000_000_000 });
  // In steps of the watch, so that every round sees its own time.
  return (ms) => {
    for (let left = ms; left > 0; left -= WATCH_MS) t.mock.timers.tick(Math.min(WATCH_MS, left));
  };
}

async function connected(server: ToyServer, link: FeedSocket, toy: { events: EventEmitter }, start = () => link.start()) {
  const socket = server.nextSocket();
  const authorised = once(toy.events, 'authorised');
  start();
  const serverSide = await socket;
  await authorised;
  return serverSide;
}

test('connects to the address the protocol prepares, with its headers, and is connected once the protocol authorises', async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t);
  const { link, toy } = toyFeed(t, server);
  assert.equal(link.status(3).state, 'off');
  const socket = server.nextSocket();
  link.start();
  assert.equal(link.status(3).state, 'connecting');
  await socket;
  assert.equal(server.requests[0]?.headers.authorization, `Bearer ${SECRET}`);
  assert.equal(server.requests[0]?.url, `/feed?token=${SECRET}`);
  assert.equal(link.status(3).subscriptions, 0, 'nothing is subscribed before the authorisation');
  await once(toy.events, 'authorised');
  link.ticked(Date.now());
  advance(500);
  assert.deepEqual(link.status(3), {
    broker: 'ibkr',
    state: 'connected',
    subscriptions: 3,
    lastTickAgeMs: 500,
    reconnects: 0,
    lastError: null,
  });
  assert.equal(toy.prepared, 1);
  assert.ok(toy.watched >= 5, 'the protocol has its watch rounds');
});

test('a socket not authorised in time is dropped, and the next one opened after the back-off (its jitter at the bottom of the step)', async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t);
  server.answers = false;
  const { link, toy } = toyFeed(t, server, { jitter: [0] });
  const first = server.nextSocket();
  const authSent = server.nextAuth();
  link.start();
  const serverSide = await first;
  await authSent;
  const closed = once(serverSide, 'close');
  advance(AUTH_TIMEOUT_MS - WATCH_MS);
  assert.equal(link.status(0).state, 'connecting');
  advance(WATCH_MS);
  assert.deepEqual(link.status(0), down('the toy websocket was not authorised in time'));
  await closed;
  const lost = toy.logs.find((l) => l.msg === LOST);
  assert.deepEqual(
    { level: lost?.level, upstream: lost?.upstream, reason: lost?.reason, attempt: lost?.attempt },
    { level: 40, upstream: 'ibkr', reason: 'the toy websocket was not authorised in time', attempt: 0 },
  );
  // random() = 0: half the first step.
  advance(BACK_OFF.first / 2 - WATCH_MS);
  assert.equal(toy.prepared, 1, 'not before the back-off');
  const second = server.nextSocket();
  advance(WATCH_MS);
  assert.equal(toy.prepared, 2);
  await second;
  assert.equal(link.status(0).reconnects, 1);
});

test("the server's silence: reported disconnected past the stale time, replaced past the dead time; the back-off doubles until a connection works", async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t);
  // The jitter at its top (just under the whole step) twice, then at its bottom.
  const { link, toy } = toyFeed(t, server, { jitter: [0.999_999, 0.999_999, 0] });
  const first = await connected(server, link, toy);
  advance(STALE_MS);
  assert.equal(link.status(1).state, 'connected', 'not silent yet');
  advance(WATCH_MS);
  const stale = link.status(1);
  assert.deepEqual(
    { state: stale.state, lastError: stale.lastError },
    { state: 'disconnected', lastError: 'nothing from the toy server for 2 s' },
    'reported at once',
  );
  assert.equal(first.readyState, first.OPEN, 'the socket kept until the dead time');
  assert.equal(toy.logs.length, 0);
  // Heard again: connected, the same socket.
  first.send('beat');
  await once(toy.events, 'beat');
  assert.equal(link.status(1).state, 'connected');

  const closed = once(first, 'close');
  advance(DEAD_MS + WATCH_MS);
  await closed;
  assert.equal(link.status(1).lastError, 'nothing from the toy server for 3 s');
  assert.deepEqual(toy.dropped, [false]);
  // Attempt 0, the jitter at its top: just under the first step.
  advance(BACK_OFF.first - WATCH_MS);
  assert.equal(toy.prepared, 1);
  server.answers = false;
  const second = server.nextSocket();
  const authSent = server.nextAuth();
  advance(WATCH_MS);
  await second;
  await authSent;
  // Not authorised in time: attempt 1, twice the step.
  advance(AUTH_TIMEOUT_MS);
  assert.equal(link.status(1).lastError, 'the toy websocket was not authorised in time');
  advance(2 * BACK_OFF.first - WATCH_MS);
  assert.equal(toy.prepared, 2, 'the second step is twice the first');
  server.answers = true;
  const third = server.nextSocket();
  const authorised = once(toy.events, 'authorised');
  advance(WATCH_MS);
  await third;
  await authorised;
  assert.equal(link.status(1).reconnects, 2);
  assert.equal(link.status(1).lastError, null);
  // A connection worked: the next failure starts from the first step again (the jitter at 0: half of it).
  link.lost('a protocol error');
  advance(BACK_OFF.first / 2 - WATCH_MS);
  assert.equal(toy.prepared, 3);
  advance(WATCH_MS);
  assert.equal(toy.prepared, 4);
});

test('the jitter stays between half the step and the whole step, and the step stops at the cap', async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t, 503);
  const { link, toy } = toyFeed(t, server, { jitter: [0.999_999, 0.999_999, 0.999_999, 0.999_999, 0] });
  link.start();
  // Refused upgrades: steps of 1, 2, 4 and 4 s (the cap), each just under its whole step; then half the cap.
  for (const [attempt, wait] of [1_000, 2_000, 4_000, 4_000, 2_000].entries()) {
    while (toy.logs.length <= attempt) await once(toy.events, 'log');
    assert.deepEqual(
      { reason: toy.logs[attempt]?.reason, attempt: toy.logs[attempt]?.attempt, state: link.status(0).state },
      { reason: 'the toy server refused the websocket (HTTP 503)', attempt, state: 'disconnected' },
    );
    advance(wait - WATCH_MS);
    assert.equal(toy.prepared, attempt + 1, `attempt ${attempt}: not before ${wait} ms`);
    advance(WATCH_MS);
    assert.equal(toy.prepared, attempt + 2, `attempt ${attempt}: by ${wait} ms`);
  }
});

test('an upgrade refused with 401 is unauthenticated; the protocol loses a socket with its own words and close code; a close is said with its code', async (t) => {
  mockClock(t);
  const refusing = await toyServer(t, 401);
  const refused = toyFeed(t, refusing);
  refused.link.start();
  await once(refused.toy.events, 'log');
  assert.deepEqual(
    { state: refused.link.status(0).state, lastError: refused.link.status(0).lastError },
    { state: 'unauthenticated', lastError: 'the toy server refused the websocket (HTTP 401)' },
  );
  assert.deepEqual(refused.toy.dropped, [true]);

  const server = await toyServer(t);
  const { link, toy } = toyFeed(t, server, { timings: { backOffMs: { first: 2, max: 2 } } });
  const serverSide = await connected(server, link, toy);
  const closed = once(serverSide, 'close');
  serverSide.send('refused');
  assert.equal((await closed)[0], 1000, 'closed with the code the protocol gave');
  assert.deepEqual(
    { state: link.status(0).state, lastError: link.status(0).lastError },
    { state: 'unauthenticated', lastError: 'the toy server refused the token' },
  );
  assert.deepEqual(toy.dropped, [true]);

  const next = server.nextSocket();
  const authorised = once(toy.events, 'authorised');
  t.mock.timers.tick(1);
  const again = await next;
  await authorised;
  const log = once(toy.events, 'log');
  again.close(4001);
  await log;
  assert.equal(link.status(0).lastError, 'the toy websocket closed (code 4001)');
});

test('a socket with nothing wanted is closed after the idle time, and opened again when something is', async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t);
  const { link, toy } = toyFeed(t, server, { silence: () => ({ staleMs: 600_000, deadMs: 600_000 }) });
  const serverSide = await connected(server, link, toy);
  toy.wanted = false;
  link.unsubscribed();
  const closed = once(serverSide, 'close');
  advance(IDLE_MS);
  assert.equal(serverSide.readyState, serverSide.OPEN);
  advance(WATCH_MS);
  assert.equal((await closed)[0], 1000);
  assert.deepEqual(link.status(0), down(null));
  assert.equal(toy.logs.filter((l) => l.msg === LOST).length, 0, 'an idle socket is not a loss');
  advance(60_000);
  assert.equal(toy.prepared, 1, 'no reconnection while nothing is wanted');
  toy.wanted = true;
  await connected(server, link, toy, () => link.subscribed());
  assert.equal(toy.prepared, 2);
});

test("the socket's timers run while it lasts; a renewal runs one at a time, spaced, knows when its socket is gone, and close() waits for it", async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t);
  const { link, toy } = toyFeed(t, server, { silence: () => ({ staleMs: 600_000, deadMs: 600_000 }) });
  await connected(server, link, toy);
  let tics = 0;
  link.every(200, () => {
    tics += 1;
  });
  advance(1_000);
  assert.equal(tics, 5);

  const renewals: { current: () => boolean; done: () => void }[] = [];
  const work = (current: () => boolean) => new Promise<void>((done) => renewals.push({ current, done }));
  link.renew(work);
  link.renew(work);
  assert.equal(renewals.length, 1, 'one at a time');
  assert.equal(renewals[0]?.current(), true);
  renewals[0]?.done();
  await new Promise(setImmediate);
  link.renew(work);
  assert.equal(renewals.length, 1, 'not again within the retry spacing');
  advance(60_000 + WATCH_MS);
  link.renew(work);
  assert.equal(renewals.length, 2);
  assert.equal(tics, 305);

  link.lost('the socket was replaced');
  assert.equal(renewals[1]?.current(), false, 'its socket is gone');
  advance(1_000);
  assert.equal(tics, 305, "the socket's timer went with it");
  let closed = false;
  const closing = link.close().then(() => {
    closed = true;
  });
  await new Promise(setImmediate);
  assert.equal(closed, false, 'close() waits for the renewal under way');
  renewals[1]?.done();
  await closing;
});

test('close() closes the socket with 1000 and leaves nothing running: no reconnection, no watch round, no timer', async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t);
  const { link, toy } = toyFeed(t, server);
  const serverSide = await connected(server, link, toy);
  let tics = 0;
  link.every(200, () => {
    tics += 1;
  });
  const code = once(serverSide, 'close');
  await link.close();
  assert.equal((await code)[0], 1000);
  assert.equal(link.status(0).state, 'off');
  const watched = toy.watched;
  advance(600_000);
  t.mock.timers.runAll();
  link.start();
  link.subscribed();
  assert.deepEqual(
    { tics, watched: toy.watched, prepared: toy.prepared, clients: server.wss.clients.size, lost: toy.logs.length },
    { tics: 0, watched, prepared: 1, clients: 0, lost: 0 },
  );
});

test('close() while a reconnection is due, or while the credentials are prepared: no socket is opened', async (t) => {
  const advance = mockClock(t);
  const refusing = await toyServer(t, 503);
  const due = toyFeed(t, refusing);
  due.link.start();
  await once(due.toy.events, 'log');
  await due.link.close();
  advance(600_000);
  assert.equal(due.toy.prepared, 1, 'the reconnection was cancelled');

  const server = await toyServer(t);
  const preparing = toyFeed(t, server);
  let give: (address: FeedAddress) => void = () => {};
  preparing.toy.prepare = () => new Promise((resolve) => (give = resolve));
  preparing.link.start();
  assert.equal(preparing.toy.prepared, 1);
  const closing = preparing.link.close();
  give({ url: server.url });
  await closing;
  assert.equal(server.requests.length, 0, 'no socket opened after the stop');
  assert.equal(preparing.link.status(0).state, 'off');
});

test('a failure to prepare (a refused session or token) is the status, and retried after the back-off without a socket', async (t) => {
  const advance = mockClock(t);
  const server = await toyServer(t);
  const { link, toy } = toyFeed(t, server, { jitter: [0] });
  toy.prepare = async () => ({ failure: 'the toy session was refused', unauthenticated: true });
  link.start();
  await once(toy.events, 'log');
  assert.deepEqual(
    { state: link.status(0).state, lastError: link.status(0).lastError },
    { state: 'unauthenticated', lastError: 'the toy session was refused' },
  );
  assert.deepEqual(toy.dropped, [], 'no socket to drop');
  toy.prepare = async () => ({ url: server.url });
  await connected(server, link, toy, () => advance(BACK_OFF.first / 2));
  assert.equal(link.status(0).state, 'connected');
});

// On the real clock: the proxy is a real one (the npm `proxy` package, test/helpers/forward-proxy.ts).
test('through the outbound proxy: the socket is tunnelled with CONNECT; a refusal names the proxy by host and port, never its password', async (t) => {
  const server = await toyServer(t);
  const password = 'pr0xy-pa55w0rd';
  const proxy = await startForwardProxy(t, { credentials: { user: 'feed', password } });
  const outboundVia = (url: string) => {
    const outbound = new OutboundProxy(new OutboundRoutes(proxySettings({ HTTP_PROXY: url, PROXY_ALSO_FOR: '127.0.0.1' }, [])));
    t.after(() => outbound.close());
    return outbound;
  };

  const through = toyFeed(t, server, { outbound: outboundVia(proxy.url) });
  await connected(server, through.link, through.toy);
  assert.deepEqual(proxy.connects, [new URL(server.url).host]);
  await through.link.close();

  const { link, toy } = toyFeed(t, server, {
    outbound: outboundVia(proxy.url.replace(password, 'wrong-pa55')),
    timings: { backOffMs: { first: 60_000, max: 60_000 } },
  });
  const lost = once(toy.events, 'log');
  link.start();
  await lost;
  assert.equal(
    link.status(0).lastError,
    `the toy websocket was not opened: the outbound proxy ${proxy.address} (HTTP_PROXY) refused the user name and password in HTTP_PROXY (HTTP 407)`,
  );
  const said = JSON.stringify([toy.logs, through.toy.logs, link.status(0)]);
  assert.ok(!said.includes(password) && !said.includes('wrong-pa55'), 'no proxy password in status or a log line');
});
