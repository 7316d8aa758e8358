import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyAlphaVantageBody } from '../../../src/upstreams/alpha-vantage/classify-body.js';
import { fixture } from '../../helpers/fixtures.js';

const av = (name: string) => classifyAlphaVantageBody(fixture('alpha-vantage', name));

test('data bodies are data', () => {
  assert.equal(av('global-quote-msft.json').kind, 'data');
  assert.equal(av('rsi-daily.json').kind, 'data');
});

test('an invalid API call means the symbol is unknown (our parameters are validated first)', () => {
  const result = av('error-invalid-call.json');
  assert.equal(result.kind, 'error');
  assert.equal(result.kind === 'error' && result.error.code, 'SYMBOL_NOT_FOUND');
});

test('a key problem is an upstream error whose message names the variable, not the key', () => {
  const result = av('error-apikey.json');
  assert.equal(result.kind === 'error' && result.error.code, 'UPSTREAM_ERROR');
  assert.match(result.kind === 'error' ? result.error.message : '', /ALPHA_VANTAGE_API_KEY/);
});

test('limit bodies are refusals with a back-off that fits their kind', () => {
  const minute = av('note-per-minute.json');
  const daily = av('information-daily.json');
  const burst = av('information-burst.json');
  assert.deepEqual([minute.kind, daily.kind, burst.kind], ['refusal', 'refusal', 'refusal']);
  assert.equal(minute.kind === 'refusal' && minute.retryAfterMs, 60_000);
  assert.equal(daily.kind === 'refusal' && daily.retryAfterMs, 3_600_000);
  assert.equal(burst.kind === 'refusal' && burst.retryAfterMs, 2_000);
});

test('a premium-only function is a configuration problem, not a refusal', () => {
  const result = av('information-premium.json');
  assert.equal(result.kind === 'error' && result.error.code, 'PROVIDER_NOT_CONFIGURED');
});

test('unknown Information text is treated as a refusal, which never spends budget', () => {
  assert.equal(classifyAlphaVantageBody({ Information: 'Something new happened.' }).kind, 'refusal');
});

test('non-objects, arrays and empty objects are upstream errors', () => {
  for (const body of [undefined, null, 'text', 42, [], {}]) {
    const result = classifyAlphaVantageBody(body);
    assert.equal(result.kind === 'error' && result.error.code, 'UPSTREAM_ERROR', JSON.stringify(body));
  }
});
