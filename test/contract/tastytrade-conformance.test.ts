// Conformance: the simulated Tastytrade API answers each recorded request (account numbers substituted
// with ones it holds) in the shape the real one did: same keys, same JSON types, and numbers written as the
// real ones are (an integer string, a decimal string with its ".0", or text), beyond what the corpus shows
// to vary. Market data items are also compared by instrument type, since reality gives crypto other keys
// than equities. Every recording is compared or listed with the reason it cannot be; a new one that is
// neither fails with its name. A recording of origin "documented" (a token answer written from the OAuth
// documentation, none having been captured) is compared as what it is: documentation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import WebSocket from 'ws';
import { createTastytradeSimulator, type TastytradeSimulator } from '../../src/sandbox/tastytrade/tastytrade-simulator.js';
import { type Loaded, recordings } from '../helpers/recorded.js';
import { compareShapes, describeDifferences, shapeOf, type Tolerances } from '../helpers/wire-shape.js';

/** Keys present in some real answers and absent in others, by kind. */
const TOLERANCES: Record<string, Tolerances> = {
  positions: {},
  'market-data': {},
  accounts: {},
  error: {},
  token: {},
  // dxLink's specification: a FEED_CONFIG names the fields before a type's first events (the recorded answer to
  // FEED_SETUP has none; dxFeed's own client cannot read COMPACT without them).
  dxlink: { '$[].eventFields': ['object'], '$[].eventFields.**': ['array', 'string'] },
};

/** Accounts of the recordings and the simulator's stand-ins: one it holds, one it does not. */
const HELD_ACCOUNT = '5WT00001';
const FOREIGN_ACCOUNT = '5WT99999';

const USER_AGENT = { 'user-agent': 'conformance-test/1.0' };
let sim: TastytradeSimulator;
let token: string;

async function get(path: string, query: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const url = new URL(path, sim.origin);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const res = await request(url, { headers: { ...USER_AGENT, authorization: `Bearer ${token}` } });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
}

/** Two recordings were stored without the envelope: compare them with the simulator's `data`. */
function storedWithoutEnvelope(r: Loaded): boolean {
  return /without the .*envelope|only the "data" object/i.test(r.edits);
}

/** How a string writes a number: an integer ("100"), a decimal with its point ("2.0"), or not a number. */
function classOf(value: string): string {
  if (/^-?\d+$/.test(value)) return 'integer-string';
  if (/^-?\d+\.\d+$/.test(value)) return 'decimal-string';
  return 'text';
}

/** For each path, the ways its string values are written. */
function stringClasses(json: unknown, path = '$', out = new Map<string, Set<string>>()): Map<string, Set<string>> {
  if (typeof json === 'string') {
    const seen = out.get(path) ?? new Set<string>();
    seen.add(classOf(json));
    out.set(path, seen);
  } else if (Array.isArray(json)) {
    for (const element of json) stringClasses(element, `${path}[]`, out);
  } else if (json !== null && typeof json === 'object') {
    for (const [key, value] of Object.entries(json)) stringClasses(value, `${path}.${key}`, out);
  }
  return out;
}

function assertConforms(r: Loaded, kind: string, simulated: { status: number; json: Record<string, unknown> }): void {
  assert.equal(simulated.status, r.status, `${r.name}: status`);
  const body = storedWithoutEnvelope(r) ? simulated.json.data : simulated.json;
  const differences = compareShapes(shapeOf(r.json), shapeOf(body), TOLERANCES[kind]);
  assert.deepEqual(differences, [], `${r.name}: the simulator differs from the recorded answer\n${describeDifferences(differences)}`);
  // A redacted recording's strings say nothing of how values are written.
  if (/REDACTED/.test(r.edits)) return;
  const recorded = stringClasses(r.json);
  const written = [...stringClasses(body)].filter(
    ([path, classes]) => recorded.has(path) && [...classes].some((c) => !recorded.get(path)?.has(c)),
  );
  assert.deepEqual(
    written.map(([path, classes]) => `${path}: simulator ${[...classes].join('|')}, recorded ${[...(recorded.get(path) ?? [])].join('|')}`),
    [],
    `${r.name}: numbers written otherwise than the recorded answer writes them`,
  );
}

/** POST /oauth/token with the simulator's own credentials; the recorded request's are placeholders. */
async function compareToken(r: Loaded): Promise<void> {
  if (r.origin === 'documented') assert.match(r.edits, /documentation/i, `${r.name}: a documented example says so`);
  const res = await request(`${sim.origin}/oauth/token`, {
    method: 'POST',
    headers: { ...USER_AGENT, 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'r', client_secret: 's' }),
  });
  assertConforms(r, 'token', { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> });
}

async function comparePositions(r: Loaded): Promise<void> {
  assertConforms(r, 'positions', await get(r.request.path.replace(/^\/accounts\/[^/]+/, `/accounts/${HELD_ACCOUNT}`), r.request.query));
}

async function compareMarketData(r: Loaded): Promise<void> {
  const simulated = await get(r.request.path, r.request.query);
  assertConforms(r, 'market-data', simulated);
  // Item by instrument type: crypto lacks keys equities have, which the union over all items would hide.
  type Item = { 'instrument-type': string };
  const recordedItems = ((r.json as { data: { items: Item[] } }).data?.items ?? []) as Item[];
  const simulatedItems = (simulated.json as { data: { items: Item[] } }).data.items;
  for (const type of new Set(recordedItems.map((item) => item['instrument-type']))) {
    const pick = (items: Item[]) => items.filter((item) => item['instrument-type'] === type);
    assert.ok(pick(simulatedItems).length > 0, `${r.name}: the simulator sent no ${type} item`);
    const differences = compareShapes(shapeOf(pick(recordedItems)), shapeOf(pick(simulatedItems)), TOLERANCES['market-data']);
    assert.deepEqual(differences, [], `${r.name}, ${type} items:\n${describeDifferences(differences)}`);
  }
}

async function compareAccounts(r: Loaded): Promise<void> {
  assertConforms(r, 'accounts', await get(r.request.path, r.request.query));
}

/** The recorded refusal names an account path; the simulator refuses an account it does not hold. */
async function compareNotPermitted(r: Loaded): Promise<void> {
  assertConforms(r, 'error', await get(r.request.path.replace(/^\/accounts\/[^/]+/, `/accounts/${FOREIGN_ACCOUNT}`), r.request.query));
}

/** The level the recorded token states is the simulator's, with the address that level names (/delayed for demo). */
async function compareQuoteToken(r: Loaded): Promise<void> {
  const recorded = (r.json as { data: { level: string; 'dxlink-url': string } }).data;
  sim.level = recorded.level as typeof sim.level;
  try {
    const simulated = await get(r.request.path, r.request.query);
    assertConforms(r, 'token', simulated);
    const ours = (simulated.json as { data: { level: string; 'dxlink-url': string } }).data;
    assert.equal(ours.level, recorded.level, r.name);
    assert.equal(new URL(ours['dxlink-url']).pathname, new URL(recorded['dxlink-url']).pathname, `${r.name}: the address of the level`);
  } finally {
    sim.level = 'api';
  }
}

/**
 * The simulated DXLink socket's frames of one session, driven by the recorded requests: SETUP, AUTH (with a
 * token the simulator issued) once UNAUTHORIZED, the channel, FEED_SETUP and the subscription, until both
 * recorded symbols have traded. `silentAfterSetup`: nothing more is sent, the server asked to speak every
 * half second: its KEEPALIVE comes, then its timeout.
 */
async function dxlinkFrames(options: { silentAfterSetup?: boolean } = {}): Promise<{ frame: Record<string, unknown>; text: string }[]> {
  const requestOf = (name: string) => String(recordings('tastytrade').find((r) => r.name === name)?.request.requestBody);
  const { data } = (await get('/api-quote-tokens')).json as { data: { token: string; 'dxlink-url': string } };
  const setup = JSON.parse(requestOf('dxlink-setup-documented')) as Record<string, unknown>;
  if (options.silentAfterSetup) {
    setup.keepaliveTimeout = 1;
    setup.acceptKeepaliveTimeout = 1;
  }
  const ws = new WebSocket(data['dxlink-url']);
  const received: { frame: Record<string, unknown>; text: string }[] = [];
  const frames: Record<string, unknown>[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the simulated socket sent ${frames.length} frames, not what was waited for`)),
        5_000,
      );
      const finish = () => {
        clearTimeout(timer);
        resolve();
      };
      ws.on('open', () => ws.send(JSON.stringify(setup)));
      ws.on('error', reject);
      ws.on('message', (raw) => {
        const frame = JSON.parse(raw.toString()) as Record<string, unknown>;
        frames.push(frame);
        received.push({ frame, text: raw.toString() });
        if (options.silentAfterSetup) return frame.type === 'ERROR' ? finish() : undefined;
        if (frame.type === 'AUTH_STATE' && frame.state === 'UNAUTHORIZED')
          ws.send(JSON.stringify({ type: 'AUTH', channel: 0, token: data.token }));
        if (frame.type === 'AUTH_STATE' && frame.state === 'AUTHORIZED') ws.send(requestOf('dxlink-channel-opened-documented'));
        if (frame.type === 'CHANNEL_OPENED') ws.send(requestOf('dxlink-feed-config-documented'));
        if (frame.type === 'FEED_CONFIG' && frame.eventFields === undefined)
          ws.send(requestOf('dxlink-feed-data-trade-compact-nan-documented'));
        const traded = (symbol: string) =>
          frames.some((f) => f.type === 'FEED_DATA' && JSON.stringify(f.data).includes(`"Trade","${symbol}"`));
        if (traded('SPY') && traded('BTC/USD:CXTALP')) finish();
      });
    });
  } finally {
    ws.terminate();
  }
  return received;
}

/** A recorded frame against the simulator's frame of the same type (and state, and event type). */
async function compareDxlinkFrame(r: Loaded): Promise<void> {
  const recorded = r.json as Record<string, unknown>;
  const received = await dxlinkFrames({ silentAfterSetup: recorded.type === 'ERROR' || recorded.type === 'KEEPALIVE' });
  const eventType = (frame: Record<string, unknown>) => (Array.isArray(frame.data) ? frame.data[0] : undefined);
  const same = received.filter(
    ({ frame }) =>
      frame.type === recorded.type &&
      frame.state === recorded.state &&
      eventType(frame) === eventType(recorded) &&
      // The answer to FEED_SETUP, as recorded, not the later ones that name a type's fields.
      (recorded.type !== 'FEED_CONFIG' || frame.eventFields === undefined),
  );
  assert.ok(same.length > 0, `${r.name}: the simulator sent no ${String(recorded.type)} frame like it`);
  const differences = compareShapes(shapeOf([recorded]), shapeOf(same.map((s) => s.frame)), TOLERANCES.dxlink);
  assert.deepEqual(differences, [], `${r.name}: the simulator differs from the recorded frame\n${describeDifferences(differences)}`);
  // Numbers as the recorded text writes them: whole ones with ".0" (100.0), none bare.
  if (recorded.type === 'FEED_DATA')
    for (const { text } of same)
      assert.doesNotMatch(text.replace(/"[^"]*"/g, '""'), /[,[]-?\d+[,\]]/, `${r.name}: a whole number written bare`);
}

function placeOf(r: Loaded): ((r: Loaded) => Promise<void>) | undefined {
  const { method, path, query } = r.request;
  if (method === 'POST' && path === '/oauth/token' && r.status === 200) return compareToken;
  if (method !== 'GET') return undefined;
  if (/^\/accounts\/[^/]+\/positions$/.test(path))
    return r.status === 200 ? comparePositions : r.status === 403 ? compareNotPermitted : undefined;
  // The adapter asks for equities, indices and crypto only (src/upstreams/tastytrade/symbols.ts).
  if (path === '/market-data/by-type' && Object.keys(query ?? {}).every((type) => ['equity', 'index', 'cryptocurrency'].includes(type)))
    return compareMarketData;
  if (path === '/customers/me/accounts') return compareAccounts;
  if (path === '/api-quote-tokens' && r.status === 200) return compareQuoteToken;
  if (path === '/realtime' && r.status === 101) return compareDxlinkFrame;
  return undefined;
}

/** Recordings the simulator has no equivalent for, each with the reason. */
const NOT_COMPARED: Record<string, string> = {
  'market-data-by-type-equity-options-data-only': 'equity options: the adapter never asks for them, so the simulator serves none',
  'error-invalid-credentials-legacy-sessions':
    'the password login (POST /sessions) was decommissioned; the simulator, like the API, has OAuth only',
  'error-preflight-check-failure-nested': 'an order refusal: the adapter places no orders and the simulator has no order endpoint',
  'api-quote-tokens-customer-not-found-documented': 'the simulated login is a customer: it is always given a quote token',
};

describe('the simulated Tastytrade API speaks the recorded wire', () => {
  before(async () => {
    sim = createTastytradeSimulator({ clientSecret: 's', refreshToken: 'r' });
    await sim.listen();
    const res = await request(`${sim.origin}/oauth/token`, {
      method: 'POST',
      headers: { ...USER_AGENT, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'r', client_secret: 's' }),
    });
    token = ((await res.body.json()) as { access_token: string }).access_token;
  });
  after(() => sim.close());

  for (const r of recordings('tastytrade')) {
    it(`${r.name}`, async () => {
      const place = placeOf(r);
      if (place === undefined) {
        assert.ok(NOT_COMPARED[r.name] !== undefined, `recording "${r.name}" is neither compared nor listed as without an equivalent`);
        return;
      }
      assert.equal(NOT_COMPARED[r.name], undefined, `${r.name} is compared: take it off the list`);
      await place(r);
    });
  }
});
