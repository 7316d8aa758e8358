// Conformance: the simulated IBKR gateway answers each recorded request (in the session state the recording
// was made in; account ids and conids are ones it knows, symbols substituted where it knows no such one) in
// the shape the real gateway did: same keys, same JSON types, beyond the keys the corpus shows to come and
// go. Every recording is compared or listed with the reason it cannot be; a new one that is neither fails
// with its name. The snapshot and contract search recordings are IBKR documentation examples, not captures
// (the search ones elided, read after the test-only removal of the elided list elements). The websocket's
// recorded frames (`GET /ws`) are held to the simulated socket's frames of the same kind, in the same
// order of events: the greeting, accounts and status after an upgrade with the session cookie (or after
// the session value, for the documented flow), the heartbeat, the replies to a `tic`, the status frames of
// a lost session, and market data for the same fields asked (a conid the simulator has no instrument for
// where the recording's was one it did not know, AAPL's for the others). Market data frames carry only what
// changed, so each group of recordings asked with the same fields is compared as a whole: every key path a
// recording has, some simulated frame has with the same JSON type, and every one a simulated frame has,
// some recording has.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { contractBySymbol } from '../../src/sandbox/ibkr/ibkr-contracts.js';
import type { MarketData } from '../../src/sandbox/ibkr/ibkr-market.js';
import { parseSnapshot, snapshotToQuote } from '../../src/upstreams/ibkr/parse-snapshot.js';
import { sendsBareFirstFrame } from '../../src/sandbox/ibkr/ibkr-stream-server.js';
import { UNIVERSE } from '../../src/sandbox/universe.js';
import { busiestSymbols, type Frame, tickleCookie } from '../helpers/ibkr-socket.js';
import { createIbkrSimulator, type IbkrSimulator } from '../../src/sandbox/ibkr/ibkr-simulator.js';
import { SESSION_REFUSALS, type SessionRefusalName } from '../../src/sandbox/ibkr/ibkr-session-faults.js';
import { errorText } from '../../src/upstreams/ibkr/classify-response.js';
import { type Loaded, recordings } from '../helpers/recorded.js';
import { compareShapes, describeDifferences, shapeOf, type Tolerances } from '../helpers/wire-shape.js';
import { withoutElisions } from '../upstreams/ibkr/documented-example.js';

/** Keys present in some real answers and absent in others, by kind of answer. */
const TOLERANCES: Record<string, Tolerances> = {
  // auth-status-authenticated-2023 has it, auth-status-authenticated-2022 does not.
  'auth-status': { '$.hardware_info': ['string'] },
  tickle: {},
  accounts: {},
  positions: {},
  // Sent now and then, never asked for: the market data service ids (the frozen 2026 capture has them).
  snapshot: { '$[].6508': ['string'] },
  // Documentation: the AAPL example's OPT section has months, the FF example has no OPT section.
  secdef: { '$[].sections[].months': ['string'] },
  'no-session': {},
};

/** Symbols of the recordings the simulator does not list, and the one standing in: FF is an index-like (ForecastEx) contract. */
const SYMBOLS: Record<string, string> = { FF: 'SPX' };

const insecure = new Agent({ connect: { rejectUnauthorized: false } });
let sim: IbkrSimulator;

async function send(method: string, path: string, query: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  const url = new URL(`${sim.baseUrl}${path}`);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  // The gateway refuses a POST without a JSON body (411); the adapter always sends {}.
  const res = await request(url, {
    method: method as 'GET',
    body: method === 'POST' ? '{}' : undefined,
    headers: { 'content-type': 'application/json' },
    dispatcher: insecure,
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text === '' ? undefined : JSON.parse(text) };
}

const sendAsRecorded = (r: Loaded) => send(r.request.method, r.request.path, r.request.query);

/** A fresh brokerage session: no subscriptions, nothing read yet. */
function newSession(): void {
  sim.setSession('no_session');
  sim.setSession('connected');
}

function assertConforms(r: Loaded, kind: string, simulated: { status: number; json: unknown }): void {
  assert.equal(simulated.status, r.status, `${r.name}: status`);
  const recorded = r.json ?? withoutElisions(r.text);
  const differences = compareShapes(shapeOf(recorded), shapeOf(simulated.json), TOLERANCES[kind]);
  assert.deepEqual(differences, [], `${r.name}: the simulator differs from the recorded answer\n${describeDifferences(differences)}`);
}

async function compareAuthStatus(r: Loaded): Promise<void> {
  newSession();
  const recorded = r.json as { authenticated: boolean; established?: boolean; connected: boolean };
  // The 2026 recording was made right after POST /logout; the 2022 one without a session while logged in without a brokerage session.
  if (recorded.established === false && !recorded.connected) await send('POST', '/logout');
  else if (!recorded.authenticated) sim.setSession('no_session');
  assertConforms(r, 'auth-status', await sendAsRecorded(r));
}

async function compareTickle(r: Loaded): Promise<void> {
  newSession();
  assertConforms(r, 'tickle', await sendAsRecorded(r));
}

async function compareAccounts(r: Loaded): Promise<void> {
  newSession();
  assertConforms(r, 'accounts', await sendAsRecorded(r));
}

async function comparePositions(r: Loaded): Promise<void> {
  newSession();
  // The gateway serves positions once the account list was read.
  await send('GET', '/portfolio/accounts');
  assertConforms(r, 'positions', await sendAsRecorded(r));
}

type Row = Record<string, unknown>;

/**
 * The account and market a recorded snapshot was answered in, as its rows say: delayed data where 6509 starts
 * with D, a closed market where a last price carries "C" or 6509 is frozen (Z); else real-time and open.
 */
function conditionsOf(rows: Row[]): { marketData: MarketData; closed: boolean } {
  const availability = rows.map((row) => String(row['6509'] ?? ''));
  const closed = rows.some((row) => String(row['31'] ?? '').startsWith('C')) || availability.some((a) => a.startsWith('Z'));
  return { marketData: availability.some((a) => a.startsWith('D')) ? 'delayed' : 'realtime', closed };
}

/** The recorder wrote "<TIMESTAMP>" where _updated was an epoch number (its files say "normalized"): compared as the number it stood for. */
const withTimestamps = (rows: Row[]): Row[] => rows.map((row) => (row._updated === '<TIMESTAMP>' ? { ...row, _updated: 0 } : row));

/**
 * The snapshot fills from the second call for a conid: a later recording is compared after the first call it
 * follows, a recording of a populated answer after a first call of its own. In the account and market the
 * recording was answered in, the simulator's rows carry the same availability and prefix, and read as fresh.
 */
async function compareSnapshot(r: Loaded): Promise<void> {
  newSession();
  await send('GET', '/iserver/accounts');
  const rows = r.json as Row[];
  const populated = rows.some((row) => row['31'] !== undefined);
  const { marketData, closed } = conditionsOf(rows);
  sim.market.marketData = marketData;
  if (closed) sim.market.sessionAt = () => 'closed';
  try {
    const first = recordings('ibkr').find((x) => x.request.path === r.request.path && x.request.query?.conids === r.request.query?.conids);
    if (first !== undefined && first !== r) await sendAsRecorded(first);
    else if (populated) await sendAsRecorded(r);
    const simulated = await sendAsRecorded(r);
    assertConforms({ ...r, json: withTimestamps(rows) }, 'snapshot', simulated);
    if (populated) assertSameFreshness(r, rows, simulated.json as Row[]);
  } finally {
    sim.market.marketData = 'realtime';
    sim.market.sessionAt = () => 'regular';
  }
}

/** Row by row (by conid), the simulator's availability and last-price prefix are the recording's, and so is what they read as. */
function assertSameFreshness(r: Loaded, recorded: Row[], simulated: Row[]): void {
  const prefix = (row: Row) => /^[CH]/.exec(String(row['31'] ?? ''))?.[0] ?? '';
  const kinds = (rows: Row[]) => parseSnapshot(rows).map((row) => snapshotToQuote('X', row, 0).freshness);
  const [real, ours] = [kinds(recorded), kinds(simulated)];
  recorded.forEach((row, i) => {
    const twin = simulated.find((x) => x.conid === row.conid);
    assert.ok(twin !== undefined, `${r.name}: no simulated row for ${String(row.conid)}`);
    assert.deepEqual([twin['6509'], prefix(twin)], [row['6509'], prefix(row)], `${r.name}: conid ${String(row.conid)}`);
    const { asOf: _a, ...recordedReading } = real[i] as object as { asOf: string };
    const { asOf: _b, ...simulatedReading } = ours[simulated.indexOf(twin)] as object as { asOf: string };
    assert.deepEqual(simulatedReading, recordedReading, `${r.name}: conid ${String(row.conid)} reads the same`);
  });
}

async function compareSecdef(r: Loaded): Promise<void> {
  newSession();
  const symbol = r.request.query?.symbol as string;
  assertConforms(r, 'secdef', await send('GET', r.request.path, { ...r.request.query, symbol: SYMBOLS[symbol] ?? symbol }));
}

/** The simulator's refusal with the recording's wording: without a brokerage session it answers it word for word. */
function refusalOf(r: Loaded): SessionRefusalName | undefined {
  const wording = errorText(r.json);
  return (Object.keys(SESSION_REFUSALS) as SessionRefusalName[]).find((name) => SESSION_REFUSALS[name].body.error === wording);
}

async function compareNoSession(r: Loaded): Promise<void> {
  sim.setSessionFaults({ refusal: refusalOf(r) });
  sim.setSession('no_session');
  const simulated = await sendAsRecorded(r);
  assertConforms(r, 'no-session', simulated);
  assert.deepEqual(simulated.json, r.json, `${r.name}: the same wording`);
  sim.setSessionFaults({ refusal: 'init-session-first' });
}

function placeOf(r: Loaded): ((r: Loaded) => Promise<void>) | undefined {
  const { method, path } = r.request;
  if (path === '/ws') return placeOfFrame(r);
  if (refusalOf(r) !== undefined) return compareNoSession;
  if (r.status !== 200) return undefined;
  if (method === 'GET' && path === '/iserver/auth/status') return compareAuthStatus;
  if (method === 'POST' && path === '/tickle') return compareTickle;
  if (method === 'GET' && path === '/portfolio/accounts') return compareAccounts;
  if (method === 'GET' && /^\/portfolio\/[^/]+\/positions\/\d+$/.test(path)) return comparePositions;
  if (method === 'GET' && path === '/iserver/marketdata/snapshot') return compareSnapshot;
  if (method === 'GET' && path === '/iserver/secdef/search') return compareSecdef;
  return undefined;
}

/** Frames the simulated socket sends until `done` says enough (or 5 s pass), after sending `texts` once open. */
async function socketFrames(options: {
  cookie: boolean;
  texts?: string[];
  done: (frames: Frame[]) => boolean;
  onOpen?: () => void;
}): Promise<Frame[]> {
  const cookie = options.cookie ? await tickleCookie(sim) : undefined;
  const ws = new WebSocket(`${sim.baseUrl.replace('https:', 'wss:')}/ws`, {
    rejectUnauthorized: false,
    headers: cookie === undefined ? {} : { cookie },
  });
  const frames: Frame[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the simulated socket sent ${frames.length} frames, not what was waited for`)),
        5_000,
      );
      ws.on('open', () => {
        for (const text of options.texts ?? []) ws.send(text);
        options.onOpen?.();
      });
      ws.on('message', (data) => {
        frames.push(JSON.parse(String(data)) as Frame);
        if (options.done(frames)) {
          clearTimeout(timer);
          resolve();
        }
      });
      ws.on('error', reject);
    });
  } finally {
    ws.terminate();
  }
  return frames;
}

const WS_TOLERANCES: Record<string, Tolerances> = {
  // The documented greeting has neither flag; the 2026 capture has both.
  greeting: { '$.isFT': ['boolean'], '$.isPaper': ['boolean'] },
  // The documented status after the session value has only "authenticated"; the 2026 capture every key.
  status: { '$.args.*': ['boolean', 'string'], '$.args.**': ['boolean', 'string'] },
  // Sent now and then: the market data service ids; the volume as a number beside "87" (not in ibind's test frame).
  // The 2021 capture has no conidEx (later ones all do).
  smd: { '$[].6508': ['string'], '$[].87_raw': ['number'], '$[].conidEx': ['string'] },
  // ibind's test frame has no envelope beyond conid, _updated and topic, no "6509", and not "7296" it asks for.
  'smd-library-mock': {
    '$[].6509': ['string'],
    '$[].6508': ['string'],
    '$[].87_raw': ['number'],
    '$[].6119': ['string'],
    '$[].server_id': ['string'],
    '$[].conidEx': ['string'],
    '$[].7296': ['string'],
  },
};

/** The simulator's greeting, accounts and status frames after an upgrade with the cookie, or after the session value. */
async function compareGreeting(r: Loaded): Promise<void> {
  newSession();
  const documented = r.origin === 'documented';
  const frames = await socketFrames({
    cookie: !documented,
    done: (f) => f.some((x) => x.topic === 'sts'),
    onOpen: () => undefined,
    texts: documented ? [JSON.stringify({ session: sim.sessionId })] : [],
  });
  const recorded = r.json as Frame;
  const simulated = frames.find((f) => f.topic === recorded.topic);
  assert.ok(simulated !== undefined, `${r.name}: the simulator sent no "${String(recorded.topic)}" frame`);
  const kind = recorded.topic === 'system' ? 'greeting' : recorded.topic === 'sts' ? 'status' : 'accounts';
  // The accounts' properties and aliases are keyed by account id: data, not names.
  const byAccount = (_key: string, path: string) => path === '$.args.acctProps' || path === '$.args.aliases';
  const differences = compareShapes(shapeOf(recorded, byAccount), shapeOf(simulated, byAccount), WS_TOLERANCES[kind]);
  assert.deepEqual(differences, [], `${r.name}\n${describeDifferences(differences)}`);
}

async function compareWaiting(r: Loaded): Promise<void> {
  newSession();
  const [first] = await socketFrames({ cookie: false, done: (f) => f.length >= 1 });
  assert.deepEqual(compareShapes(shapeOf(r.json), shapeOf(first)), [], r.name);
}

async function compareHeartbeat(r: Loaded): Promise<void> {
  newSession();
  const frames = await socketFrames({ cookie: true, done: (f) => f.some((x) => x.hb !== undefined) });
  const beat = frames.find((f) => f.hb !== undefined);
  assert.deepEqual(compareShapes(shapeOf(r.json), shapeOf(beat)), [], r.name);
}

async function compareTic(r: Loaded): Promise<void> {
  newSession();
  const frames = await socketFrames({ cookie: true, texts: ['tic'], done: (f) => f.filter((x) => x.topic === 'tic').length >= 4 });
  const replies = frames.filter((f) => f.topic === 'tic');
  assert.equal(replies.length, 4, 'four replies to one tic, as recorded');
  assert.deepEqual(compareShapes(shapeOf(r.json), shapeOf(replies[0])), [], r.name);
}

/** The status frames of a session lost under an open socket, one key each. */
async function compareLostSession(r: Loaded): Promise<void> {
  newSession();
  const frames = await socketFrames({
    cookie: true,
    done: (f) => {
      if (f.length === 3) sim.loseSessionSilently();
      return f.filter((x) => x.topic === 'sts').length >= 4;
    },
  });
  const lost = frames.filter((f) => f.topic === 'sts').slice(1);
  const recorded = r.json as { args: Frame };
  const key = Object.keys(recorded.args)[0] as string;
  const simulated = lost.find((f) => key in (f.args as Frame));
  assert.ok(simulated !== undefined, `${r.name}: no status frame with "${key}" after the session was lost`);
  assert.deepEqual(compareShapes(shapeOf(r.json), shapeOf(simulated)), [], r.name);
}

/** A group of recordings asked with the same fields, against a simulated subscription with those fields. */
async function compareMarketData(r: Loaded): Promise<void> {
  newSession();
  const recorded = r.json as Frame;
  const fields = (/\+(\{.*\})$/.exec(r.request.requestBody as string)?.[1] ?? '{"fields":["31","84","86","6509"]}') as string;
  const group = recordings('ibkr').filter(
    (x) =>
      x.request.path === '/ws' &&
      x.request.requestBody !== undefined &&
      String(x.request.requestBody).endsWith(fields) &&
      (x.json as Frame).conid !== 8595,
  );
  if (recorded['31'] === 'N/A') {
    // A conid the simulator has no instrument for, as 8595 was for the recording's symbol.
    const frames = await socketFrames({ cookie: true, texts: [`smd+8595+${fields}`], done: (f) => f.some((x) => x.topic === 'smd+8595') });
    const simulated = frames.find((f) => f.topic === 'smd+8595');
    assert.deepEqual(compareShapes(shapeOf(recorded), shapeOf(simulated)), [], r.name);
    return;
  }
  const busy = contractBySymbol(busiestSymbols(sim)[0]!)!;
  const bare = UNIVERSE.map((i) => contractBySymbol(i.symbol)).find((c) => c !== undefined && sendsBareFirstFrame(c))!;
  const conids = [
    busy.conid,
    ...(group.some((x) => Object.keys(x.json as Frame).every((k) => !/^\d/.test(k) || k === '6509')) ? [bare.conid] : []),
  ];
  const frames = await socketFrames({
    cookie: true,
    texts: conids.map((conid) => `smd+${conid}+${fields}`),
    // The first frames, then enough ticks for every kind of change (about two seconds of the busiest contract).
    done: (f) => f.filter((x) => x.conid === busy.conid).length >= 14,
  });
  const market = frames.filter((f) => typeof f.topic === 'string' && f.topic.startsWith('smd+') && f.conid !== undefined);
  const sameGroup = group.length > 0 ? group.map((x) => x.json) : [recorded];
  const differences = compareShapes(
    shapeOf(sameGroup.includes(recorded) ? sameGroup : [...sameGroup, recorded]),
    shapeOf(market),
    WS_TOLERANCES[r.origin === 'library-mock' ? 'smd-library-mock' : 'smd'],
  );
  assert.deepEqual(differences, [], `${r.name} (with ${group.length - 1} more asked the same)\n${describeDifferences(differences)}`);
}

function placeOfFrame(r: Loaded): ((r: Loaded) => Promise<void>) | undefined {
  const frame = r.json as Frame;
  if (frame.message === 'waiting for session') return compareWaiting;
  if (typeof frame.topic === 'string' && frame.topic.startsWith('smd+')) return compareMarketData;
  if (frame.topic === 'system') return frame.hb === undefined ? compareGreeting : compareHeartbeat;
  if (frame.topic === 'tic') return compareTic;
  if (frame.topic === 'act') return compareGreeting;
  if (frame.topic === 'sts') {
    const args = frame.args as Frame;
    return Object.keys(args).length === 1 && args.authenticated !== true ? compareLostSession : compareGreeting;
  }
  return undefined;
}

/** Recordings the simulator has no equivalent for, each with the reason. */
const NOT_COMPARED: Record<string, string> = {
  'secdef-info-no-contracts-500':
    'the simulator serves no /iserver/secdef/info; the wording stands for one the service has never seen, and tests hand it to the simulator as their own refusal',
};

describe('the simulated IBKR gateway speaks the recorded wire', () => {
  before(async () => {
    // The market held open, and a quick heartbeat, so that ticks and heartbeats come within the test.
    sim = await createIbkrSimulator({ pacing: false, sessionAt: () => 'regular', stream: { heartbeatMs: 200 } });
    await sim.listen();
  });
  after(() => sim.close());

  for (const r of recordings('ibkr')) {
    it(`${r.name}`, async () => {
      const place = placeOf(r);
      if (place === undefined) {
        assert.ok(NOT_COMPARED[r.name] !== undefined, `recording "${r.name}" is neither compared nor listed as without an equivalent`);
        return;
      }
      await place(r);
    });
  }
});
