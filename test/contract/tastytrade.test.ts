// Contract: every recorded Tastytrade answer, read by the adapter's own parser, chosen by the recording's
// request; a recording no rule below can place fails with its name. Expected values come from the recorded
// body. Two recordings were stored by their authors without the {"data", "context"} envelope (said in
// their `edits`): they are put back into one, as the API sends them, before the parser reads them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { roundTo } from '../../src/broker/numbers.js';
import { HttpClient, type UpstreamResponse } from '../../src/upstreams/http-client.js';
import { parseAccounts, TASTYTRADE_CURRENCY } from '../../src/upstreams/tastytrade/parse-accounts.js';
import { errorLabel, parseError } from '../../src/upstreams/tastytrade/parse-envelope.js';
import { parseMarketData } from '../../src/upstreams/tastytrade/parse-market-data.js';
import { parsePositions, tastytradeAssetClass } from '../../src/upstreams/tastytrade/parse-positions.js';
import { parseToken } from '../../src/upstreams/tastytrade/parse-token.js';
import { parseDxlinkMessage } from '../../src/upstreams/tastytrade/parse-dxlink-message.js';
import { parseQuoteToken } from '../../src/upstreams/tastytrade/parse-quote-token.js';
import { TastytradeClient } from '../../src/upstreams/tastytrade/tastytrade-client.js';
import { type Loaded, recording, recordings } from '../helpers/recorded.js';

type Row = Record<string, unknown>;

/** The body as the API sends it: recordings stored without the envelope get it back. */
function asReceived(r: Loaded): unknown {
  const storedWithoutEnvelope = /without the .*envelope|only the "data" object/i.test(r.edits);
  return storedWithoutEnvelope ? { data: r.json, context: r.request.path } : r.json;
}

const itemsOf = (r: Loaded): Row[] => (asReceived(r) as { data: { items: Row[] } }).data.items;

function checkPositions(r: Loaded): void {
  const account = /^\/accounts\/([^/]+)\/positions$/.exec(r.request.path)?.[1] as string;
  const items = itemsOf(r);
  assert.deepEqual(
    parsePositions(asReceived(r), account, 0),
    items.map((item) => {
      const quantity = Number(item.quantity) * (item['quantity-direction'] === 'Short' ? -1 : 1);
      // Without include-marks there is no mark (recorded so): the close price stands in.
      const price = Number(item.mark ?? item['mark-price'] ?? item['close-price']);
      const average = Number(item['average-open-price']);
      const multiplier = Number(item.multiplier);
      return {
        accountId: item['account-number'],
        symbol: item.symbol,
        description: item['underlying-symbol'] === item.symbol ? null : `${item['underlying-symbol']} ${item['instrument-type']}`,
        assetClass: tastytradeAssetClass(item['instrument-type']),
        quantity,
        averageCost: average,
        marketPrice: price,
        marketValue: roundTo(quantity * price * multiplier, 4),
        unrealizedPnl: roundTo((price - average) * quantity * multiplier, 4),
        currency: TASTYTRADE_CURRENCY,
        // A mark's freshness is not stated; the close price standing in is the previous close.
        freshness: { kind: (item.mark ?? item['mark-price']) ? 'unknown' : 'prior-close', asOf: '1970-01-01T00:00:00.000Z' },
      };
    }),
  );
}

function checkMarketData(r: Loaded): void {
  const items = itemsOf(r);
  const parsed = parseMarketData(asReceived(r), 0);
  assert.deepEqual(
    parsed.map((p) => p.symbol),
    items.map((item) => item.symbol),
    'OCC symbols keep their inner spaces',
  );
  items.forEach((item, i) => {
    const last = Number(item.last);
    const previous = Number(item['prev-close']);
    const change = roundTo(last - previous, 6);
    assert.deepEqual(
      parsed[i]?.quote,
      {
        last,
        bid: Number(item.bid),
        ask: Number(item.ask),
        // Sizes and volume are decimal strings ("2.0", "35348839.0"); crypto has no volume at all.
        bidSize: Number(item['bid-size']),
        askSize: Number(item['ask-size']),
        change,
        changePercent: roundTo((change / previous) * 100, 4),
        volume: item.volume === undefined ? null : Number(item.volume),
        updatedAt: new Date(String(item['updated-at'])).toISOString(),
        // Documented real-time (no delayed REST endpoint), halted where the item says so.
        freshness: {
          kind: item['is-trading-halted'] === true ? 'halted' : 'realtime',
          asOf: new Date(String(item['updated-at'])).toISOString(),
        },
      },
      String(item.symbol),
    );
  });
}

function checkAccounts(r: Loaded): void {
  const items = itemsOf(r);
  assert.deepEqual(
    parseAccounts(asReceived(r)),
    items
      .map((item) => item.account as Row)
      .filter((account) => account['is-closed'] !== true)
      .map((account) => ({
        accountId: account['account-number'],
        name: account.nickname ?? account['account-type-name'],
        type: account['account-type-name'],
        currency: TASTYTRADE_CURRENCY,
      })),
  );
}

/** The OAuth token answer: at the top level, no envelope; the lifetime as stated. */
function checkToken(r: Loaded): void {
  const raw = r.json as { access_token: string; expires_in: number };
  assert.deepEqual(parseToken(r.json), { value: raw.access_token, lifetimeMs: raw.expires_in * 1000 });
}

/** {"error": {"code", "message", "errors"?: [...]}}: the codes, the specific nested one beside the outer; no message kept. */
function checkError(r: Loaded): void {
  const raw = (r.json as { error: { code: unknown; message: string; errors?: { code: string }[] } }).error;
  const nested = raw.errors?.[0]?.code ?? null;
  const parsed = parseError(r.json);
  assert.deepEqual(parsed, { code: String(raw.code), specific: nested !== null && nested !== String(raw.code) ? nested : null });
  assert.ok(!errorLabel(parsed).includes(raw.message), 'messages may echo request data and the support identifier: never repeated');
}

/** GET /api-quote-tokens: the token and the DXLink address, read from the answer. */
function checkQuoteToken(r: Loaded): void {
  const raw = (r.json as { data: { token: string; 'dxlink-url': string; level: string } }).data;
  assert.deepEqual(parseQuoteToken(r.json), { token: raw.token, url: raw['dxlink-url'], level: raw.level });
}

/** A DXLink frame: read as the message it is (test/upstreams/tastytrade/parse-dxlink-message.test.ts reads each closely). */
function checkDxlinkFrame(r: Loaded): void {
  const message = parseDxlinkMessage(r.text);
  assert.ok(!['unreadable', 'other'].includes(message.kind), `${r.name}: read as ${message.kind}`);
}

function placeOf(r: Loaded): ((r: Loaded) => void) | undefined {
  const { method, path } = r.request;
  const json = r.json as Row | undefined;
  // Every error body has the one shape, whatever the endpoint (the order and legacy login ones included).
  if (r.status >= 400) return json !== undefined && typeof json.error === 'object' && json.error !== null ? checkError : undefined;
  if (method === 'POST' && path === '/oauth/token') return checkToken;
  if (method !== 'GET') return undefined;
  if (/^\/accounts\/[^/]+\/positions$/.test(path)) return checkPositions;
  if (path === '/market-data/by-type') return checkMarketData;
  if (path === '/customers/me/accounts') return checkAccounts;
  if (path === '/api-quote-tokens') return checkQuoteToken;
  if (path === '/realtime' && r.status === 101) return checkDxlinkFrame;
  return undefined;
}

for (const r of recordings('tastytrade')) {
  test(`recorded ${r.name} (${r.request.method} ${r.request.path} -> ${r.status}) reads as what it is`, () => {
    const check = placeOf(r);
    assert.ok(check !== undefined, `no contract check can place the recording "${r.name}": add one`);
    check(r);
  });
}

test('a recorded refusal reaches the caller with its codes, the specific nested one included', async (t) => {
  const http = new HttpClient({ name: 'Tastytrade', timeoutMs: 1_000, logger: pino({ level: 'silent' }) });
  t.after(() => http.close());
  let answer: Loaded = recording('tastytrade', 'error-preflight-check-failure-nested');
  http.request = async (url): Promise<UpstreamResponse> => {
    if (String(url).endsWith('/oauth/token'))
      return { status: 200, headers: {}, json: { access_token: 'a', expires_in: 900, token_type: 'Bearer' }, text: '' };
    return { status: answer.status, headers: {}, json: answer.json, text: answer.text };
  };
  const client = new TastytradeClient({
    url: 'http://127.0.0.1:9',
    clientSecret: 's',
    refreshToken: 'r',
    http,
    logger: pino({ level: 'silent' }),
  });
  for (const name of ['error-preflight-check-failure-nested', 'error-not-permitted']) {
    answer = recording('tastytrade', name);
    const raw = (answer.json as { error: { code: string; message: string; errors?: { code: string }[] } }).error;
    const error = await client
      .get('/accounts/5WT00001/positions', () => null)
      .then(
        () => assert.fail('expected a refusal'),
        (e: Error) => e,
      );
    for (const code of [raw.code, ...(raw.errors ?? []).map((e) => e.code)])
      assert.ok(error.message.includes(code), `${name}: ${error.message}`);
    assert.ok(!error.message.includes(raw.message), name);
  }
});
