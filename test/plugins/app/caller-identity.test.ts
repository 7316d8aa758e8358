import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { startApp } from '../../helpers/app.js';
import { UNCAPPED } from '../../helpers/config.js';

const sha = (key: string) => createHash('sha256').update(key).digest('hex');
const AGENTS = 'agents-key-6f1d0c2b9a8e7f60';
const LAPTOP = 'laptop-key-0a1b2c3d4e5f6789';
const WATCHER = 'watcher-key-99aa88bb77cc66dd';
const CLIENT_KEYS = [
  `agents sha256=${sha(AGENTS)} share=2 scopes=market,mcp rate=2`,
  `laptop sha256=${sha(LAPTOP)} scopes=market,broker`,
  `watcher sha256=${sha(WATCHER)} scopes=mcp`,
].join('\n');
const QUOTE = '/api/provider-a/quote?symbol=IBM';
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

test('a wrong client key is 401 INVALID_CLIENT_KEY in the one error shape; no key is the anonymous caller, as the spec wants', async (t) => {
  const service = await startApp(t, { env: { ...UNCAPPED, CLIENT_KEYS }, transport: 'socket' });
  const wrong = await service.get(QUOTE, bearer('not-a-key-at-all'));
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error.code, 'INVALID_CLIENT_KEY');
  assert.equal(wrong.body.error.requestId, wrong.headers['x-request-id']);
  assert.match(String(wrong.headers['www-authenticate']), /^Bearer realm="market-data-proxy", error="invalid_token"/);
  assert.equal((await service.get(QUOTE)).status, 200);
  assert.equal((await service.get(QUOTE, bearer(AGENTS))).status, 200);
  // The status and the metrics answer everyone, with or without a key.
  assert.equal((await service.get('/api/system/status', bearer(WATCHER))).status, 200);
  for (const text of [...service.scan.lines, ...service.scan.responses]) {
    for (const key of [AGENTS, 'not-a-key-at-all', sha(AGENTS)])
      assert.ok(!text.includes(key), 'a key never appears in a log line or an answer');
  }
});

test('a key is refused where its scopes do not reach (403 CLIENT_KEY_FORBIDDEN), naming the scope, never the key', async (t) => {
  const service = await startApp(t, { env: { ...UNCAPPED, CLIENT_KEYS } });
  const refused = await service.get(QUOTE, bearer(WATCHER));
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.code, 'CLIENT_KEY_FORBIDDEN');
  assert.match(refused.body.error.message, /"watcher" may not be used here: it needs the scope market/);
  assert.match(String(refused.headers['www-authenticate']), /error="insufficient_scope", scope="market"/);
});

test("a keyed caller has its own rate limit, apart from its address's; the hot path leaves keyed callers to the pipeline", async (t) => {
  const service = await startApp(t, { env: { CLIENT_KEYS, RATE_LIMIT_PER_MINUTE: '4' }, transport: 'socket' });
  // Warm the entry, so that the hot path would answer a repeat.
  assert.equal((await service.get(QUOTE)).status, 200);
  const keyed = [await service.get(QUOTE, bearer(AGENTS)), await service.get(QUOTE, bearer(AGENTS))];
  assert.deepEqual(
    keyed.map((r) => [r.status, r.headers['x-ratelimit-limit']]),
    [
      [200, '2'],
      [200, '2'],
    ],
  );
  const over = await service.get(QUOTE, bearer(AGENTS));
  assert.equal(over.status, 429);
  assert.match(over.body.error.message, /too many requests from this caller: the limit is 2 per minute/);
  // The address's own allowance is untouched by the key's requests, and its answers say its own limit.
  const anonymous = await service.get(QUOTE);
  assert.equal(anonymous.status, 200);
  assert.equal(anonymous.headers['x-ratelimit-limit'], '4');
  assert.equal(anonymous.headers['x-ratelimit-remaining'], '2');
});

test('a key with the broker scope reads broker data from any network, as BROKER_TOKEN does; a key without it is left to the network rule', async (t) => {
  const service = await startApp(t, { env: { ...UNCAPPED, CLIENT_KEYS, BROKER: 'ibkr', BROKER_ALLOW_FROM: 'none' } });
  const admitted = await service.get('/api/broker/accounts', bearer(LAPTOP));
  assert.equal(admitted.status, 200, admitted.text);
  const refused = await service.get('/api/broker/accounts', bearer(AGENTS));
  assert.equal(refused.status, 403, 'a valid key without the scope is no wrong token: the network rule refuses');
  assert.equal(refused.body.error.code, 'BROKER_FORBIDDEN');
});

test('the request log names a keyed caller by its key name, never by the key', async (t) => {
  const lines: string[] = [];
  const service = await startApp(t, { env: { ...UNCAPPED, CLIENT_KEYS, LOG_LEVEL: 'info' } });
  await service.get(QUOTE, bearer(AGENTS));
  lines.push(...service.scan.lines);
  const request = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'request' && line.url === QUOTE);
  assert.equal(request?.client, 'agents');
  assert.ok(!lines.some((line) => line.includes(AGENTS)));
});
