// Integer query parameters accept plain decimal digits only; every other spelling of a number (and every
// other string) is a 400 INVALID_PARAMETER that costs no upstream call. Seeded: FC_SEED / FC_RUNS replay.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Client } from 'undici';
import { integerParameters } from '../../../src/plugins/app/strict-integers.js';
import { startApp } from '../../helpers/app.js';
import { NO_FALLBACK, UNCAPPED } from '../../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const SEED = Number(process.env.FC_SEED ?? 20_261_123);
const RUNS = Number(process.env.FC_RUNS ?? 80);

/** Numbers as JavaScript, Ajv's coercion or a sloppy client may write them. */
const lenientSpelling = fc
  .tuple(fc.integer({ min: 0, max: 2_000 }), fc.nat(11))
  .map(
    ([n, form]) =>
      [
        `${n}.0`,
        `+${n}`,
        ` ${n}`,
        `${n} `,
        `\t${n}`,
        `0x${n.toString(16)}`,
        `${n}e0`,
        `${n / 10}e1`,
        `${n}.`,
        `-${n}`,
        `${n}n`,
        `0b${n.toString(2)}`,
      ][form]!,
  );
const plainDigits = fc.integer({ min: 0, max: 1_200 }).map(String);
const anyValue = fc.oneof(
  { weight: 3, arbitrary: lenientSpelling },
  { weight: 2, arbitrary: plainDigits },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.stringMatching(/^0{1,3}[0-9]{1,3}$/) },
);

test('the integer parameters of every route are found from its schema', () => {
  assert.deepEqual(
    integerParameters({ properties: { symbol: { type: 'string' }, time_period: { type: 'integer' }, n: { type: 'number' } } }),
    ['time_period'],
  );
  assert.deepEqual(integerParameters(undefined), []);
});

const CASES = [
  { route: '/api/provider-a/technical?symbol=IBM&time_period=', min: 2, max: 1_000, upstream: 'alphaVantage', path: '/query' },
  { route: '/api/provider-b/dividends?symbol=AAPL&limit=', min: 1, max: 1_000, upstream: 'massive', path: '/v3/reference/dividends' },
] as const;

for (const { route, min, max, upstream, path } of CASES) {
  test(`${route.split('?')[0]}: accepted exactly when the value is plain digits within ${min}-${max}`, async (t) => {
    const running = await startApp(t, { env: ANSWERS_ENV });
    const client = new Client(running.url);
    t.after(() => client.close());
    const seen = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(anyValue, async (value) => {
        const calls = running.sandbox[upstream].count(path);
        const res = await client.request({ method: 'GET', path: route + encodeURIComponent(value) });
        const body = (await res.body.json()) as { error?: { code: string; message: string } };
        // Surrounding spaces are trimmed from every value (query-values.ts) before the digits are checked.
        const valid = /^ *[0-9]+ *$/.test(value) && Number(value) >= min && Number(value) <= max;
        if (valid) {
          assert.equal(res.statusCode, 200, `${JSON.stringify(value)}: ${JSON.stringify(body).slice(0, 200)}`);
          seen.accepted += 1;
          return;
        }
        assert.equal(res.statusCode, 400, JSON.stringify(value));
        assert.equal(body.error?.code, 'INVALID_PARAMETER');
        assert.equal(running.sandbox[upstream].count(path), calls, 'a refused value costs no upstream call');
        seen.refused += 1;
      }),
      { numRuns: RUNS, seed: SEED },
    );
    assert.ok(seen.accepted > 0 && seen.refused > 0, JSON.stringify(seen));
  });
}

test('the spellings the audit found are refused with a message naming the parameter', async (t) => {
  const { get } = await startApp(t, { env: ANSWERS_ENV });
  const technical = '/api/provider-a/technical?symbol=IBM&time_period=';
  // A bare `+` in a query string is a space (`+14` is ` 14`): trimmed, as below.
  for (const value of ['1e2', '0x10', '%2B14', '14.0', '']) {
    const res = await get(technical + value);
    assert.equal(res.status, 400, value);
    assert.equal(res.body.error.code, 'INVALID_PARAMETER', value);
    assert.match(res.body.error.message, /^time_period must be/, value);
  }
  const limit = await get('/api/provider-b/dividends?limit=5.0');
  assert.equal(limit.status, 400);
  assert.match(limit.body.error.message, /^limit must be a whole number written in plain decimal digits$/);
  assert.equal((await get(`${technical}014`)).status, 200, 'leading zeros are still plain digits');
  for (const value of ['%205%20', '+5'])
    assert.equal(
      (await get(`/api/provider-b/dividends?limit=${value}`)).status,
      200,
      `${value}: surrounding spaces are trimmed, as from every value`,
    );
});
