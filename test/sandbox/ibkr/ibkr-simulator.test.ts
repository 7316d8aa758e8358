import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Agent, request } from 'undici';
import { type IbkrSimulator, createIbkrSimulator } from '../../../src/sandbox/ibkr/ibkr-simulator.js';

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

async function start(t: TestContext, pacing = false, now?: () => number, penaltyMs?: number): Promise<IbkrSimulator> {
  const sim = await createIbkrSimulator({ pacing, now, penaltyMs });
  await sim.listen();
  t.after(() => sim.close());
  return sim;
}

async function call(
  sim: IbkrSimulator,
  path: string,
  method: 'GET' | 'POST' = 'GET',
  body?: string,
): Promise<{ status: number; json: any; text: string }> {
  const res = await request(`${sim.baseUrl}${path}`, {
    method,
    body,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    dispatcher: insecure,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, json, text };
}

test('serves HTTPS with a self-signed certificate: refused by default verification', async (t) => {
  const sim = await start(t);
  assert.match(sim.baseUrl, /^https:\/\/127\.0\.0\.1:\d+\/v1\/api$/);
  await assert.rejects(request(`${sim.baseUrl}/iserver/auth/status`), (e: any) =>
    /self[- ]signed|certificate/i.test(`${e.code} ${e.message}`),
  );
  assert.equal((await call(sim, '/iserver/auth/status')).json.authenticated, true);
});

test('session states: 401 when logged out, "Init session first" without a brokerage session, ssodh/init starts one', async (t) => {
  const sim = await start(t);
  sim.setSession('logged_out');
  const out = await call(sim, '/iserver/auth/status');
  assert.equal(out.status, 401);
  assert.equal(out.text, '');
  sim.setSession('no_session');
  assert.deepEqual((await call(sim, '/iserver/accounts')).json, { error: 'Init session first', statusCode: 400 });
  assert.equal((await call(sim, '/tickle', 'POST', '{}')).json.iserver.authStatus.authenticated, false);
  assert.equal((await call(sim, '/iserver/auth/ssodh/init', 'POST')).status, 411, 'a POST needs a JSON body');
  assert.equal((await call(sim, '/iserver/auth/ssodh/init', 'POST', '{"publish":true,"compete":true}')).status, 200);
  assert.equal((await call(sim, '/iserver/accounts')).json.isPaper, true);
});

test('without a brokerage session the portfolio still reads, /iserver answers the chosen recorded refusal, and switches hold over HTTP', async (t) => {
  const sim = await start(t);
  const control = (method: 'GET' | 'POST' | 'DELETE', body?: unknown) =>
    request(`${sim.origin}/__sandbox/ibkr`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: insecure,
    }).then(async (res) => ({ status: res.statusCode, json: (await res.body.json()) as any }));
  assert.equal((await control('POST', { session: 'no_session', refusal: 'no-bridge' })).status, 200);
  assert.equal((await call(sim, '/portfolio/accounts')).status, 200, 'the login alone reads the portfolio');
  const refused = await call(sim, '/iserver/secdef/search?symbol=AAPL');
  assert.equal(refused.status, 400);
  assert.deepEqual(refused.json, { error: 'Bad Request: no bridge', statusCode: 400 });
  sim.setSessionFaults({ refusal: 'not-authenticated' });
  assert.equal((await call(sim, '/iserver/accounts')).status, 401);
  assert.equal((await control('POST', { refusal: 'made-up' })).status, 400, 'only recorded refusals over HTTP');
  assert.equal((await control('POST', { session: 'asleep' })).status, 400);

  await control('POST', { unrecoverable: true, statusClaimsSession: true });
  assert.equal((await call(sim, '/iserver/auth/status')).json.authenticated, true, 'the status claims a session');
  assert.equal((await call(sim, '/iserver/auth/ssodh/init', 'POST', '{}')).status, 200);
  assert.equal(sim.session, 'no_session', 'the session could not be started');
  assert.equal((await call(sim, '/iserver/accounts')).status, 401);

  const cleared = await control('DELETE');
  assert.deepEqual(cleared.json.session, 'connected');
  assert.equal(cleared.json.refusal, 'init-session-first');
  assert.equal((await call(sim, '/iserver/accounts')).status, 200);
});

test('a snapshot before the session read /iserver/accounts is refused with a 500 "Please query /accounts first"', async (t) => {
  const sim = await start(t);
  const query = '/iserver/marketdata/snapshot?conids=265598&fields=31';
  assert.deepEqual(await call(sim, query).then((r) => [r.status, r.json]), [500, { error: 'Please query /accounts first' }]);
  await call(sim, '/iserver/accounts');
  assert.equal((await call(sim, query)).status, 200);
  sim.replaceSessionSilently();
  assert.equal((await call(sim, '/iserver/auth/status')).json.authenticated, true, 'a new session, nothing said');
  assert.equal((await call(sim, query)).status, 500, 'the new session has not read its accounts');
});

test('snapshots: empty on the first call for a conid, then string values with separators and suffixes', async (t) => {
  const sim = await start(t);
  await call(sim, '/iserver/accounts');
  const search = await call(sim, '/iserver/secdef/search?symbol=AAPL');
  assert.equal(search.json.length, 2);
  assert.equal(search.json[1].conid, '265598');
  assert.deepEqual((await call(sim, '/iserver/secdef/search?symbol=NOSUCH')).json, { error: 'No symbol found' });
  const query = '/iserver/marketdata/snapshot?conids=265598&fields=31,55,84,85,86,87,88,82,83,7741';
  assert.deepEqual((await call(sim, query)).json, [{ conid: 265598, conidEx: '265598' }]);
  const [row] = (await call(sim, query)).json;
  assert.match(row['31'], /^C?\d+\.\d{2}$/);
  assert.equal(row['55'], 'AAPL');
  assert.match(row['87'], /^\d+(\.\d)?[MK]?$/);
  assert.match(row['88'], /^\d{1,3}(,\d{3})*$/);
  assert.equal(typeof row._updated, 'number');
});

test('pacing: more than 10 requests in a burst get 429, and /portfolio/accounts twice within 5 s too', async (t) => {
  // A frozen clock: on a loaded machine the 12 requests can take over 100 ms, enough to refill a token.
  const frozen = () => 1_700_000_000_000;
  const sim = await start(t, true, frozen);
  const statuses = await Promise.all(Array.from({ length: 12 }, () => call(sim, '/iserver/auth/status').then((r) => r.status)));
  assert.equal(statuses.filter((s) => s === 429).length, 2);
  const paced = await start(t, true, frozen);
  assert.equal((await call(paced, '/portfolio/accounts')).status, 200);
  assert.equal((await call(paced, '/portfolio/accounts')).status, 429);
});

test('pacing is a rolling second at arrival: the 11th request within 1000 ms is refused, then the penalty box', async (t) => {
  const clock = { t: 1_700_000_000_000 };
  const sim = await start(t, true, () => clock.t);
  const status = async () => (await call(sim, '/iserver/auth/status')).status;
  for (let i = 0; i < 10; i += 1) {
    assert.equal(await status(), 200);
    clock.t += 99;
  }
  // 10 requests over 891 ms: an 11th at 990 ms falls in the same second, one at 1000 ms does not.
  assert.equal(await status(), 429);
  clock.t += 10;
  assert.equal(await status(), 200);
  assert.equal(sim.paceRefusals, 1);
  assert.equal(sim.peakPerSecond, 11, 'the refused request arrived too');

  const boxed = await start(t, true, () => clock.t, 60_000);
  const boxedStatus = async () => (await call(boxed, '/iserver/auth/status')).status;
  for (let i = 0; i < 10; i += 1) assert.equal(await boxedStatus(), 200);
  assert.equal(await boxedStatus(), 429);
  clock.t += 5_000;
  assert.equal(await boxedStatus(), 429, 'still in the penalty box a second later');
  clock.t += 55_000;
  assert.equal(await boxedStatus(), 200);
});

test('positions pages of 100, an empty page after the last, and /portfolio/accounts required first', async (t) => {
  const sim = await start(t);
  sim.setPositionCount('DU1234567', 120);
  assert.equal((await call(sim, '/portfolio/DU1234567/positions/0')).status, 400);
  await call(sim, '/portfolio/accounts');
  assert.equal((await call(sim, '/portfolio/DU1234567/positions/0')).json.length, 100);
  assert.equal((await call(sim, '/portfolio/DU1234567/positions/1')).json.length, 20);
  assert.deepEqual((await call(sim, '/portfolio/DU1234567/positions/2')).json, []);
});

test('market data as recorded (2026): RpB live; frozen ZB without a prefix when closed; a delayed account DPB, 15 minutes behind, "C" and no quote when closed', async (t) => {
  const now = Date.parse('2026-04-28T15:00:00Z');
  const sim = await createIbkrSimulator({ pacing: false, now: () => now, sessionAt: () => 'regular' });
  await sim.listen();
  t.after(() => sim.close());
  await call(sim, '/iserver/accounts');
  const query = '/iserver/marketdata/snapshot?conids=265598&fields=31,84,86';
  await call(sim, query);
  const row = async () => (await call(sim, query)).json[0];

  const live = await row();
  assert.deepEqual([live['6509'], /^\d/.test(live['31']), typeof live['84']], ['RpB', true, 'string']);

  sim.market.marketData = 'delayed';
  const delayed = await row();
  assert.equal(delayed['6509'], 'DPB');
  // The account sees the market of a quarter of an hour ago: what a real-time account saw then.
  sim.market.marketData = 'realtime';
  const earlier = await createIbkrSimulator({ pacing: false, now: () => now - 15 * 60_000, sessionAt: () => 'regular' });
  await earlier.listen();
  t.after(() => earlier.close());
  await call(earlier, '/iserver/accounts');
  await call(earlier, query);
  assert.equal(delayed['31'], (await call(earlier, query)).json[0]['31']);

  sim.market.sessionAt = () => 'closed';
  const frozen = await row();
  assert.deepEqual([frozen['6509'], /^\d/.test(frozen['31']), typeof frozen['84'], typeof frozen['86']], ['ZB', true, 'string', 'string']);
  sim.market.marketData = 'delayed';
  const priorClose = await row();
  assert.deepEqual(
    [priorClose['6509'], priorClose['31'].startsWith('C'), '84' in priorClose, '86' in priorClose],
    ['DPB', true, false, false],
  );
});

test('the account and the market are switched over HTTP too, and reset with the rest', async (t) => {
  const sim = await start(t);
  const control = (method: 'POST' | 'DELETE', body?: unknown) =>
    request(`${sim.origin}/__sandbox/ibkr`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: insecure,
    }).then(async (res) => ({ status: res.statusCode, json: (await res.body.json()) as any }));
  const set = await control('POST', { marketData: 'delayed', market: 'closed' });
  assert.deepEqual([set.status, set.json.marketData, set.json.market], [200, 'delayed', 'closed']);
  assert.equal(sim.market.sessionAt(Date.now()), 'closed');
  assert.equal((await control('POST', { marketData: 'live' })).status, 400);
  assert.equal((await control('POST', { market: 'sometimes' })).status, 400);
  const reset = await control('DELETE');
  assert.deepEqual([reset.json.marketData, reset.json.market], ['realtime', 'us-hours']);
});

test('after POST /logout the auth status answers as recorded (every flag false, no MAC); everything else is 401', async (t) => {
  const sim = await start(t);
  assert.deepEqual((await call(sim, '/logout', 'POST', '{}')).json, { status: true });
  const status = await call(sim, '/iserver/auth/status');
  assert.equal(status.status, 200);
  assert.deepEqual(status.json, { authenticated: false, established: false, competing: false, connected: false, MAC: null });
  assert.equal((await call(sim, '/portfolio/accounts')).status, 401);
  // A gateway nobody has logged in to since it started answers 401 to the status too.
  sim.setSession('logged_out');
  assert.equal((await call(sim, '/iserver/auth/status')).status, 401);
});
