// Conformance: the simulated IBKR gateway answers each recorded request (in the session state the recording
// was made in; account ids and conids are ones it knows, symbols substituted where it knows no such one) in
// the shape the real gateway did: same keys, same JSON types, beyond the keys the corpus shows to come and
// go. Every recording is compared or listed with the reason it cannot be; a new one that is neither fails
// with its name. The snapshot and contract search recordings are IBKR documentation examples, not captures
// (the search ones elided, read after the test-only removal of the elided list elements).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
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
  snapshot: {},
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
  // The recording without a session was made while logged in to the gateway without a brokerage session.
  if ((r.json as { authenticated: boolean }).authenticated === false) sim.setSession('no_session');
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

/** The snapshot fills from the second call for a conid: a later recording is compared after the first call it follows. */
async function compareSnapshot(r: Loaded): Promise<void> {
  newSession();
  await send('GET', '/iserver/accounts');
  const first = recordings('ibkr').find((x) => x.request.path === r.request.path && x.request.query?.conids === r.request.query?.conids);
  if (first !== undefined && first !== r) await sendAsRecorded(first);
  assertConforms(r, 'snapshot', await sendAsRecorded(r));
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

/** Recordings the simulator has no equivalent for, each with the reason. */
const NOT_COMPARED: Record<string, string> = {
  'secdef-info-no-contracts-500':
    'the simulator serves no /iserver/secdef/info; the wording stands for one the service has never seen, and tests hand it to the simulator as their own refusal',
};

describe('the simulated IBKR gateway speaks the recorded wire', () => {
  before(async () => {
    sim = await createIbkrSimulator({ pacing: false });
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
