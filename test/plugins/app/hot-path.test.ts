import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mock, test } from 'node:test';
import { startApp, type TestResponse } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const QUOTE = '/api/provider-a/quote';
const PER_REQUEST = new Set(['x-request-id', 'age', 'date', 'cache-control']);

function comparable(res: TestResponse): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(res.headers)
      .filter(([name]) => !PER_REQUEST.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

test('a fresh repeat is answered by the hot path with exactly the headers and body of the full pipeline', async (t) => {
  const { get, app } = await startApp(t, { transport: 'socket', env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '100' } });
  assert.equal((await get(`${QUOTE}?symbol=IBM`)).headers['x-cache'], 'MISS');
  // Another spelling of the same key: a cache HIT rendered by Fastify, which then arms the hot path for it.
  const viaFastify = await get(`${QUOTE}?symbol=ibm`);
  assert.equal(viaFastify.headers['x-cache'], 'HIT');
  assert.equal(app.hotPath.served, 0);
  const viaHotPath = await get(`${QUOTE}?symbol=ibm`, { origin: 'https://dashboard.example' });
  assert.equal(app.hotPath.served, 1);
  assert.equal(viaHotPath.status, 200);
  assert.equal(viaHotPath.text, viaFastify.text);
  const expected = comparable(viaFastify);
  expected['x-ratelimit-remaining'] = String(Number(expected['x-ratelimit-remaining']) - 1);
  assert.deepEqual(comparable(viaHotPath), expected);
  assert.match(String(viaHotPath.headers['cache-control']), /^public, max-age=\d+, stale-while-revalidate=\d+, stale-if-error=\d+$/);
  assert.notEqual(viaHotPath.headers['x-request-id'], viaFastify.headers['x-request-id']);
  assert.equal((await get(`${QUOTE}?symbol=ibm`, { 'x-request-id': 'trace-42' })).headers['x-request-id'], 'trace-42');
});

test('the hot path answers 304 and HEAD like the pipeline, and counts in metrics and cache figures', async (t) => {
  const { get, scrape, app } = await startApp(t, { env: ANSWERS_ENV, transport: 'socket' });
  const first = await get(`${QUOTE}?symbol=MSFT`);
  await get(`${QUOTE}?symbol=MSFT`);
  const served = app.hotPath.served;
  const notModified = await get(`${QUOTE}?symbol=MSFT`, { 'if-none-match': String(first.headers.etag) });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.text, '');
  const head = await get(`${QUOTE}?symbol=MSFT`, {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
  assert.equal(head.headers['content-length'], String(Buffer.byteLength(first.text)));
  assert.equal(app.hotPath.served, served + 2);
  const metrics = (await scrape()).text;
  assert.match(metrics, /mdp_http_requests_total\{method="GET",route="\/api\/provider-a\/quote",status="304"\} 1/);
  assert.ok(app.deps.cache.counters.hit >= 3);
});

test('the per-caller limit counts hot answers, and the pipeline renders the 429', async (t) => {
  const { get } = await startApp(t, { transport: 'socket', env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '3' } });
  const answers = [];
  for (let i = 0; i < 5; i += 1) answers.push(await get(`${QUOTE}?symbol=KO`));
  assert.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 429, 429],
  );
  assert.deepEqual(
    answers.slice(0, 3).map((a) => a.headers['x-ratelimit-remaining']),
    ['2', '1', '0'],
  );
  assert.equal(answers[3]?.body.error.code, 'RATE_LIMITED');
  assert.ok(Number(answers[3]?.headers['retry-after']) >= 1);
});

for (const [trustProxy, forwardedApart] of [
  ['true', true],
  ['1', true],
  ['127.0.0.1,10.0.0.0/8', true],
  // The test's peer (127.0.0.1) is not a named proxy: whatever it forwards, the caller is the peer.
  ['10.0.0.0/8', false],
] as const) {
  test(`TRUST_PROXY=${trustProxy}: a forwarded caller the hot path counts is the caller the pipeline limits`, async (t) => {
    const { get, app } = await startApp(t, {
      transport: 'socket',
      env: { ...ANSWERS_ENV, RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: trustProxy },
    });
    const [a, b, armer] = [
      { 'x-forwarded-for': '203.0.113.1' },
      { 'x-forwarded-for': '203.0.113.2' },
      { 'x-forwarded-for': '203.0.113.3' },
    ];
    // The pipeline's answer to a third caller arms the hot path.
    assert.equal((await get(`${QUOTE}?symbol=KO`, armer)).status, 200);
    const served = app.hotPath.served;
    const hot = [];
    for (let i = 0; i < 3; i += 1) hot.push(await get(`${QUOTE}?symbol=KO`, a));
    assert.equal(app.hotPath.served, served + (forwardedApart ? 3 : 2));
    // Another spelling, which only the pipeline answers: A's counter is the one the hot path spent.
    const pipelineA = await get(`${QUOTE}?symbol=ko`, a);
    assert.equal(pipelineA.status, 429);
    assert.equal(pipelineA.body.error.code, 'RATE_LIMITED');
    const pipelineB = await get(`${QUOTE}?symbol=ko`, b);
    const hotB = await get(`${QUOTE}?symbol=KO`, b);
    if (forwardedApart) {
      assert.deepEqual(
        hot.map((h) => h.headers['x-ratelimit-remaining']),
        ['2', '1', '0'],
      );
      assert.equal(pipelineB.status, 200);
      assert.equal(pipelineB.headers['x-ratelimit-remaining'], '2');
      assert.equal(hotB.headers['x-ratelimit-remaining'], '1');
      assert.equal(app.hotPath.served, served + 4);
    } else {
      assert.deepEqual(
        hot.map((h) => h.status),
        [200, 200, 429],
      );
      assert.equal(pipelineB.status, 429);
      assert.equal(hotB.status, 429);
    }
  });
}

test("a hot answer's Age and request line are the pipeline's: Age counted per second from the entry's storage, a caller's key redacted from the logged URL", async (t) => {
  const running = await startApp(t, { transport: 'socket', env: { ...ANSWERS_ENV, CACHE_QUOTE_FRESH_SECONDS: '600' } });
  const query = '/api/provider-a/query?function=GLOBAL_QUOTE&symbol=IBM&apikey=a-caller-key';
  assert.equal((await running.get(query)).status, 200);
  await running.get(query);
  // Date alone is mocked, from now: the entry's storedAt and the clock stay on one time line.
  const start = Date.now();
  mock.timers.enable({ apis: ['Date'], now: start });
  t.after(() => mock.timers.reset());
  const lineOf = (id: string) => JSON.parse(running.scan.lines.find((l) => l.includes(`"reqId":"${id}"`)) ?? '{}') as { url?: string };
  // Each step asks the hot path, then the pipeline (a spelling of its own each time), at the same instant.
  for (const [step, later] of [0, 400, 700, 1_000, 2_900].entries()) {
    mock.timers.setTime(start + later);
    const served = running.app.hotPath.served;
    const hot = await running.get(query, { 'x-request-id': `hot-${step}` });
    assert.equal(running.app.hotPath.served, served + 1, `step ${step}: answered by the hot path`);
    const pipeline = await running.get(`${query.replace('GLOBAL_QUOTE', 'global_quote')}&step=${step}`, {
      'x-request-id': `pipeline-${step}`,
    });
    assert.equal(running.app.hotPath.served, served + 1, `step ${step}: answered by the pipeline`);
    assert.equal(hot.headers.age, pipeline.headers.age, `step ${step} (+${later} ms): Age`);
  }
  await running.get('/api/system/live');
  assert.equal(lineOf('hot-0').url, '/api/provider-a/query?function=GLOBAL_QUOTE&symbol=IBM&apikey=[REDACTED]');
  assert.equal(lineOf('hot-0').url, lineOf('pipeline-0').url?.replace('global_quote', 'GLOBAL_QUOTE').replace('&step=0', ''));
});

test('stale entries and bodies on GET always go through the pipeline', async (t) => {
  const stale = await startApp(t, { transport: 'socket', env: { ...ANSWERS_ENV, CACHE_QUOTE_FRESH_SECONDS: '0' } });
  await stale.get(`${QUOTE}?symbol=PEP`);
  assert.equal((await stale.get(`${QUOTE}?symbol=PEP`)).headers['x-cache'], 'STALE');
  assert.equal(stale.app.hotPath.served, 0);

  const open = await startApp(t, { env: ANSWERS_ENV, transport: 'socket' });
  await open.get(`${QUOTE}?symbol=PEP`);
  const answer = await rawRequest(
    open.url,
    `GET ${QUOTE}?symbol=PEP HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
  );
  assert.match(answer, /^HTTP\/1.1 400 /);
  assert.equal(open.app.hotPath.served, 0);
});

test('under a CORS_ORIGINS list the hot path grants the listed origins only, whatever origin armed it', async (t) => {
  const strict = await startApp(t, { transport: 'socket', env: { ...ANSWERS_ENV, CORS_ORIGINS: 'https://good.example' } });
  // The pipeline's first answer arms the hot path, with the allowed origin's grant in it.
  await strict.get(`${QUOTE}?symbol=PEP`, { origin: 'https://good.example' });
  const evil = await strict.get(`${QUOTE}?symbol=PEP`, { origin: 'https://evil.example' });
  const none = await strict.get(`${QUOTE}?symbol=PEP`);
  const good = await strict.get(`${QUOTE}?symbol=PEP`, { origin: 'https://good.example' });
  assert.equal(strict.app.hotPath.served, 3);
  assert.equal(evil.headers['access-control-allow-origin'], undefined);
  assert.equal(none.headers['access-control-allow-origin'], undefined);
  assert.equal(good.headers['access-control-allow-origin'], 'https://good.example');
  for (const answer of [evil, none, good]) assert.equal(answer.headers.vary, 'Origin');
  // A preflight of the armed URL is the CORS plugin's to answer.
  const preflight = await strict.get(
    `${QUOTE}?symbol=PEP`,
    { origin: 'https://good.example', 'access-control-request-method': 'GET' },
    'OPTIONS',
  );
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], 'https://good.example');
  assert.equal(strict.app.hotPath.served, 3);
});

/** undici drops a Content-Length on a bodiless GET, so the request is written by hand. */
async function rawRequest(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += String(chunk)));
  socket.end(text);
  await once(socket, 'close');
  return received;
}
