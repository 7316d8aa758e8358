// Conformance: the simulated Massive server answers each recorded request (tickers substituted with ones
// it knows) in the shape the real one did: same keys, same JSON types, beyond the keys the corpus shows to
// come and go. Every recording is either compared or listed below with the reason it cannot be; a new
// recording that is neither fails with its name. All Massive recordings are captures (none is documentation).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { DIVIDENDS_PATH, MassiveSimulator } from '../../src/sandbox/massive/massive-simulator.js';
import { type Loaded, recordings } from '../helpers/recorded.js';
import { compareShapes, describeDifferences, shapeOf, type Tolerances } from '../helpers/wire-shape.js';

const KEY = 'conformance-key';
const PLAN_KEY = 'conformance-plan-without-dividends';

/** Keys present in some real dividends pages and absent in others. */
const PAGE_TOLERANCES: Tolerances = {
  // dividends-qqqy-limit-1-next-url (2024) has it; dividends-ewy-2022-01 and the all-tickers page (2022) do not.
  '$.results[].currency': ['string'],
  // Only while a next page exists (dividends-qqqy-limit-1-next-url); the all-tickers page has none though full.
  '$.next_url': ['string'],
};

/** Error bodies: the one envelope, no optional keys seen. */
const ERROR_TOLERANCES: Tolerances = {};

interface Simulated {
  status: number;
  json: Record<string, unknown>;
}

let sim: MassiveSimulator;

async function ask(query: Record<string, string>, key: string | undefined): Promise<Simulated> {
  const url = new URL(DIVIDENDS_PATH, sim.origin);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const res = await request(url, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
}

/** The recorded query with its ticker replaced by one the simulator pays, of the same frequency when it has one. */
function simulatedQuery(r: Loaded): Record<string, string> {
  const query = { ...r.request.query };
  if (query.ticker !== undefined) {
    const frequency = (r.json as { results: { frequency?: number }[] }).results[0]?.frequency;
    const records = sim.records();
    query.ticker = (records.find((d) => d.frequency === frequency) ?? records[0])!.ticker;
  }
  return query;
}

function assertConforms(r: Loaded, simulated: Simulated, tolerances: Tolerances): void {
  assert.equal(simulated.status, r.status, `${r.name}: status`);
  const differences = compareShapes(shapeOf(r.json), shapeOf(simulated.json), tolerances);
  assert.deepEqual(differences, [], `${r.name}: the simulator differs from the recorded answer\n${describeDifferences(differences)}`);
}

async function comparePage(r: Loaded): Promise<void> {
  const simulated = await ask(simulatedQuery(r), KEY);
  assertConforms(r, simulated, PAGE_TOLERANCES);
  const recordedNext = (r.json as { next_url?: string }).next_url;
  if (recordedNext === undefined) return;
  // The shape cannot see how the cursor is written: as the recorded one, or the adapter meets another format live.
  const simulatedNext = simulated.json.next_url;
  assert.equal(typeof simulatedNext, 'string', `${r.name}: the simulator sent no next_url for the same request`);
  const paramsOf = (url: string) => [...new URL(url).searchParams.keys()];
  assert.deepEqual(paramsOf(simulatedNext as string), paramsOf(recordedNext), 'next_url: only a cursor, no key');
  const cursorOf = (url: string) => /[?&]cursor=([^&]*)/.exec(url)?.[1] as string;
  const UNPADDED_BASE64URL = /^[A-Za-z0-9_-]+$/;
  assert.match(cursorOf(recordedNext), UNPADDED_BASE64URL);
  assert.match(
    cursorOf(simulatedNext as string),
    UNPADDED_BASE64URL,
    'the cursor as written on the wire: unpadded base64url, nothing escaped',
  );
}

async function compareKeyNotProvided(r: Loaded): Promise<void> {
  assertConforms(r, await ask(r.request.query ?? {}, undefined), ERROR_TOLERANCES);
}

/** The recorded 403 comes from aggregates; the dividends equivalent is a key whose plan lacks dividends. */
async function compareNotAuthorized(r: Loaded): Promise<void> {
  const simulated = await ask({}, PLAN_KEY);
  assertConforms(r, simulated, ERROR_TOLERANCES);
  const pricing = / at (https:\/\/\S+)$/.exec(String((r.json as { message: string }).message))?.[0];
  assert.ok(pricing !== undefined && String(simulated.json.message).endsWith(pricing), 'the real wording ends with the pricing page');
}

function placeOf(r: Loaded): ((r: Loaded) => Promise<void>) | string {
  const json = r.json as Record<string, unknown>;
  if (r.request.path === DIVIDENDS_PATH && r.status === 200) return comparePage;
  if (r.request.path === DIVIDENDS_PATH && /not provided/i.test(String(json.error))) return compareKeyNotProvided;
  if (json.status === 'NOT_AUTHORIZED') return compareNotAuthorized;
  return `no simulator equivalent for ${r.request.method} ${r.request.path} -> ${r.status}`;
}

/** Recordings the simulator has no equivalent for, each with the reason. */
const NOT_COMPARED: Record<string, string> = {};

describe('the simulated Massive server speaks the recorded wire', () => {
  before(async () => {
    sim = new MassiveSimulator({ validKeys: [KEY], unentitledKeys: [PLAN_KEY] });
    await sim.listen();
  });
  after(() => sim.close());

  for (const r of recordings('massive')) {
    it(`${r.name}`, async () => {
      const place = placeOf(r);
      if (typeof place === 'string') {
        assert.ok(
          NOT_COMPARED[r.name] !== undefined,
          `recording "${r.name}" is neither compared nor listed as without an equivalent (${place})`,
        );
        return;
      }
      await place(r);
    });
  }
});
