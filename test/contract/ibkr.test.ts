// Contract: every recorded IBKR Client Portal Gateway answer, read by the adapter's own parser, chosen by
// the recording's request; a recording no rule below can place fails with its name. Expected values come
// from the recorded body. The two contract search examples are IBKR documentation elided with "...": they
// are read after dropping the elided list elements (test/upstreams/ibkr/documented-example.ts), which
// fills in nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { classifyGatewayAnswer, type RefusalMeaning } from '../../src/upstreams/ibkr/classify-response.js';
import { IbkrBroker } from '../../src/upstreams/ibkr/ibkr-broker.js';
import { parsePortfolioAccounts } from '../../src/upstreams/ibkr/parse-accounts.js';
import { ibkrAssetClass, parsePositionsPage } from '../../src/upstreams/ibkr/parse-positions.js';
import { parseSecdefSearch, pickListing } from '../../src/upstreams/ibkr/parse-secdef.js';
import { type AuthStatus, parseAuthStatus, parseTickle } from '../../src/upstreams/ibkr/parse-session.js';
import { FIELD, parseSnapshot, snapshotToQuote } from '../../src/upstreams/ibkr/parse-snapshot.js';
import { mergeFields, parseStreamMessage, streamedQuote } from '../../src/upstreams/ibkr/parse-stream-message.js';
import { type Loaded, recording, recordings } from '../helpers/recorded.js';
import { startReplay } from '../helpers/replay-upstream.js';
import { withoutElisions } from '../upstreams/ibkr/documented-example.js';
import { iserverAccountsStandIn } from '../upstreams/ibkr/iserver-accounts-stand-in.js';

type Row = Record<string, unknown>;

/** The body as the gateway sent it: JSON, or a documented example once its elisions are dropped. */
function bodyOf(r: Loaded): unknown {
  if (r.json !== undefined) return r.json;
  assert.equal(r.origin, 'documented', `${r.name} is not JSON and not a documented (elided) example`);
  return withoutElisions(r.text);
}

/** The number a gateway value holds: "1,300" has a thousands separator, a last price may carry a C or H; "N/A" holds none. */
function numberIn(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const n = Number(String(value).replace(/^[CH]/, '').replace(/,/g, ''));
  return Number.isNaN(n) ? null : n;
}

/**
 * What an auth status says: "established" only where it is sent; else a session exists while authenticated or
 * connected. Logged out: a status that sends "established" with all three false (as after a recorded logout).
 */
function expectedAuth(raw: Row): AuthStatus {
  const authenticated = raw.authenticated === true;
  const connected = raw.connected === true;
  return {
    authenticated,
    established: typeof raw.established === 'boolean' ? raw.established : authenticated || connected,
    connected,
    competing: raw.competing === true,
    message: String(raw.message || raw.fail || ''),
    loggedOut: raw.established === false && !authenticated && !connected,
  };
}

function checkAuthStatus(r: Loaded): void {
  const raw = bodyOf(r) as Row;
  assert.deepEqual(parseAuthStatus(raw), expectedAuth(raw));
  // Every capture lacks "established": an authenticated one must not read as "no session".
  if (raw.authenticated === true) assert.equal(parseAuthStatus(raw).established, true);
}

function checkTickle(r: Loaded): void {
  const raw = bodyOf(r) as { iserver: { authStatus: Row } };
  assert.deepEqual(parseTickle(raw), expectedAuth(raw.iserver.authStatus));
}

function checkPortfolioAccounts(r: Loaded): void {
  const raw = bodyOf(r) as Row[];
  const firstText = (...values: unknown[]) => values.find((v) => typeof v === 'string' && v.trim() !== '') as string;
  assert.deepEqual(
    parsePortfolioAccounts(raw),
    raw.map((row) => ({
      accountId: row.accountId,
      name: firstText(row.accountAlias, row.accountTitle, row.displayName, row.desc, row.accountId),
      // As sent: a paper account is "DEMO" (its tradingType "STKNOPT" is not read).
      type: row.type,
      currency: row.currency,
    })),
  );
}

function checkPositions(r: Loaded): void {
  const raw = bodyOf(r) as Row[];
  const account = /^\/portfolio\/([^/]+)\/positions\/\d+$/.exec(r.request.path)?.[1] as string;
  assert.deepEqual(
    parsePositionsPage(raw, account, 0),
    raw.map((row) => ({
      accountId: row.acctId,
      symbol: row.ticker,
      description: row.contractDesc === row.ticker ? null : row.contractDesc,
      // IBKR's assetClass ("STK"), not its "type" ("ETF" for SPY).
      assetClass: ibkrAssetClass(row.assetClass),
      quantity: Number(row.position),
      averageCost: row.avgPrice,
      marketPrice: row.mktPrice,
      // The gateway's own value: the recorded "multiplier": 0.0 of a stock must never scale anything.
      marketValue: row.mktValue,
      unrealizedPnl: row.unrealizedPnl,
      currency: row.currency,
      // A positions row says nothing of how fresh its price is.
      freshness: { kind: 'unknown', asOf: '1970-01-01T00:00:00.000Z' },
    })),
  );
  assert.equal(ibkrAssetClass(raw[0]?.assetClass), 'stock');
}

function checkSnapshot(r: Loaded): void {
  const raw = bodyOf(r) as Row[];
  const rows = parseSnapshot(raw);
  assert.deepEqual(
    rows.map((row) => row.conid),
    raw.map((row) => row.conid),
  );
  const codes = Object.values(FIELD) as string[];
  raw.forEach((fields, i) => {
    const row = rows[i]!;
    // The first answer for a conid has no field at all: no data, and a quote of nulls the broker asks again for.
    assert.equal(
      row.hasData,
      codes.some((code) => code !== FIELD.symbol && code !== FIELD.availability && fields[code] !== undefined),
      `row ${i}`,
    );
    const quote = snapshotToQuote('X', row, 0);
    assert.deepEqual(
      { last: quote.last, bid: quote.bid, ask: quote.ask, bidSize: quote.bidSize, askSize: quote.askSize, volume: quote.volume },
      {
        last: numberIn(fields[FIELD.last]),
        bid: numberIn(fields[FIELD.bid]),
        ask: numberIn(fields[FIELD.ask]),
        bidSize: numberIn(fields[FIELD.bidSize]),
        askSize: numberIn(fields[FIELD.askSize]),
        // Only the requested fields come back: without 87 there is no volume, not a zero.
        volume: numberIn(fields[FIELD.volume]),
      },
      `row ${i}`,
    );
    // The recorder wrote "<TIMESTAMP>" where _updated was a number: no time is read from a placeholder.
    const updated = typeof fields._updated === 'number' ? new Date(fields._updated).toISOString() : null;
    assert.equal(quote.updatedAt, updated);
    // How fresh: said by 6509 and the prefix (test/contract/freshness.test.ts), as of _updated where there is one.
    if (updated !== null) assert.equal(quote.freshness.asOf, updated);
  });
}

function checkSecdef(r: Loaded): void {
  const raw = bodyOf(r) as Row[];
  const listings = parseSecdefSearch(raw);
  assert.deepEqual(
    listings,
    raw.map((row) => ({
      conid: Number(row.conid),
      symbol: row.symbol,
      name: row.companyName,
      exchange: String(row.description).toUpperCase(),
      secTypes: (row.sections as Row[]).map((s) => s.secType),
    })),
  );
  const symbol = r.request.query?.symbol as string;
  const picked = pickListing(listings, symbol);
  const usable = raw.filter(
    (row) => row.symbol === symbol && (row.sections as Row[]).some((s) => s.secType === 'STK' || s.secType === 'IND'),
  );
  assert.equal(picked?.conid, usable.length === 0 ? undefined : Number(usable[0]?.conid));
}

/** What each recorded refusal meant, as its reporter's thread tells (SOURCES.md), not as its wording looks. */
const REFUSALS: Record<string, ReturnType<typeof classifyGatewayAnswer>['kind'] | RefusalMeaning> = {
  // Logged in from another host, no brokerage session (ibeam#117).
  'init-session-first-400': 'no_session',
  // "It means that the brokerage session is not started" (ibind#104); the reporter's /portfolio reads worked.
  'no-bridge-400': 'no_session',
  // Gateway logged in, brokerage session not authenticated: a 401, whose mending the status check decides.
  'not-authenticated-401': 'logged_out',
  // A refusal of the request's own values on an endpoint the service does not call: no known wording.
  'secdef-info-no-contracts-500': 'unknown',
};

function checkRefusal(r: Loaded): void {
  const answer = classifyGatewayAnswer(r.status, {}, bodyOf(r));
  assert.equal(answer.kind === 'refused' ? answer.meaning : answer.kind, REFUSALS[r.name]);
  if (answer.kind === 'refused') assert.equal(answer.status, r.status);
}

/** A websocket frame reads as what its structure says; a market data frame's quote holds the frame's own numbers. */
function checkStreamFrame(r: Loaded): void {
  const raw = r.json as Row;
  const message = parseStreamMessage(r.text);
  const topic = raw.topic as string | undefined;
  if (topic?.startsWith('smd+')) {
    if (raw.conid === undefined) return assert.deepEqual(message, { kind: 'market-data-without-conid' });
    assert.equal(message.kind, 'market-data');
    if (message.kind !== 'market-data') return;
    assert.equal(message.conid, raw.conid);
    assert.equal(message.updatedAt, raw._updated);
    const quote = streamedQuote('X', message.conid, mergeFields(undefined, message.fields), message.updatedAt ?? 0);
    // "N/A" and other words are no number; "83" arrives as a JSON number, prices as strings.
    const number = (code: string) => {
      const parsed = numberIn(raw[code]);
      return parsed === null || Number.isNaN(parsed) ? null : parsed;
    };
    assert.deepEqual(
      {
        last: quote.last,
        bid: quote.bid,
        ask: quote.ask,
        bidSize: quote.bidSize,
        askSize: quote.askSize,
        changePercent: quote.changePercent,
        volume: quote.volume,
      },
      {
        last: number(FIELD.last),
        bid: number(FIELD.bid),
        ask: number(FIELD.ask),
        bidSize: number(FIELD.bidSize),
        askSize: number(FIELD.askSize),
        changePercent: number(FIELD.changePercent),
        // "12.2M" is 12,200,000, as the frame's own "87_raw" says where it is sent.
        volume: raw['87_raw'] === undefined ? volumeIn(raw[FIELD.volume]) : (raw['87_raw'] as number),
      },
    );
    assert.equal(quote.updatedAt, typeof raw._updated === 'number' ? new Date(raw._updated).toISOString() : null);
    return;
  }
  if (topic === 'system') return assert.deepEqual(message, raw.hb === undefined ? { kind: 'greeting' } : { kind: 'heartbeat', at: raw.hb });
  if (topic === 'sts') {
    const args = raw.args as Row;
    return assert.deepEqual(message, { kind: 'status', authenticated: args.authenticated as boolean | undefined });
  }
  if (raw.message === 'waiting for session') return assert.deepEqual(message, { kind: 'waiting-for-session' });
  assert.deepEqual(message, { kind: 'other' }, `${r.name}: ${topic} carries nothing for quotes`);
}

/** "24.2M" as the number it stands for. */
function volumeIn(value: unknown): number | null {
  if (value === undefined) return null;
  const match = /^([\d.]+)([KM]?)$/.exec(String(value));
  assert.ok(match !== null, `a volume as IBKR writes it: ${String(value)}`);
  return Math.round(Number(match[1]) * { '': 1, K: 1_000, M: 1_000_000 }[match[2] as '' | 'K' | 'M']);
}

function placeOf(r: Loaded): ((r: Loaded) => void) | undefined {
  const { method, path } = r.request;
  if (path === '/ws') return checkStreamFrame;
  if (r.status >= 400) return REFUSALS[r.name] === undefined ? undefined : checkRefusal;
  if (method === 'GET' && path === '/iserver/auth/status') return checkAuthStatus;
  if (method === 'POST' && path === '/tickle') return checkTickle;
  if (method === 'GET' && path === '/portfolio/accounts') return checkPortfolioAccounts;
  if (method === 'GET' && /^\/portfolio\/[^/]+\/positions\/\d+$/.test(path)) return checkPositions;
  if (method === 'GET' && path === '/iserver/marketdata/snapshot') return checkSnapshot;
  if (method === 'GET' && path === '/iserver/secdef/search') return checkSecdef;
  return undefined;
}

for (const r of recordings('ibkr')) {
  test(`recorded ${r.name} (${r.request.method} ${r.request.path} -> ${r.status}) reads as what it is`, () => {
    const check = placeOf(r);
    assert.ok(check !== undefined, `no contract check can place the recording "${r.name}": add one`);
    check(r);
  });
}

test('the documented contract search examples are not JSON as published: only the test-only substitution reads them', () => {
  for (const r of recordings('ibkr').filter((x) => x.body.endsWith('.txt'))) {
    assert.equal(r.json, undefined, r.name);
    assert.ok(Array.isArray(withoutElisions(r.text)), r.name);
  }
});

test('end to end over loopback: the empty first snapshot is hidden by the warm-up, the quote is the later recorded one', async (t) => {
  const first = recording('ibkr', 'snapshot-first-call-empty');
  const later = recording('ibkr', 'snapshot-populated');
  const secdef = recording('ibkr', 'secdef-search-aapl-documented-elided');
  // The replay matches recorded query values; the broker asks for its own fields, so the snapshots match any query.
  const anyQuery = (r: Loaded): Loaded => ({ ...r, request: { ...r.request, query: {} } });
  const served: Loaded[] = [
    anyQuery(first),
    anyQuery(later),
    // Recorded with secType=STK; the broker searches without it (an index is as good an answer).
    { ...secdef, request: { ...secdef.request, query: { symbol: 'AAPL' } }, text: JSON.stringify(withoutElisions(secdef.text)) },
    iserverAccountsStandIn(first),
  ];
  const replay = await startReplay(t, 'ibkr', served, '/v1/api');
  const broker = new IbkrBroker({
    url: `${replay.origin}/v1/api`,
    tlsVerify: false,
    timeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
    tickleIntervalMs: 0,
    warmupDelayMs: 1,
  });
  t.after(() => broker.close());
  const { quotes, missing } = await broker.quotes(['AAPL']);
  assert.deepEqual(missing, []);
  assert.deepEqual(replay.misses, []);
  assert.deepEqual(
    replay.served.filter((name) => name.startsWith('snapshot')),
    [first.name, later.name],
  );
  const row = (later.json as Row[]).find((x) => x.conid === Number((withoutElisions(secdef.text) as Row[])[0]?.conid)) as Row;
  assert.equal(quotes.AAPL?.last, numberIn(row[FIELD.last]));
  assert.equal(quotes.AAPL?.bidSize, numberIn(row[FIELD.bidSize]));
  assert.equal(quotes.AAPL?.updatedAt, new Date(row._updated as number).toISOString());
});
