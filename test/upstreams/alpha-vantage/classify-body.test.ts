import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftOf } from '../../../src/core/errors.js';
import { classifyAlphaVantageBody, classifyAlphaVantageCsv } from '../../../src/upstreams/alpha-vantage/classify-body.js';
import { fixture, fixtureText } from '../../helpers/fixtures.js';
import { recording } from '../../helpers/recorded.js';

const av = (name: string) => classifyAlphaVantageBody(fixture('alpha-vantage', name));

test('data bodies are data', () => {
  assert.equal(av('global-quote-msft.json').kind, 'data');
  assert.equal(av('rsi-daily.json').kind, 'data');
});

test('an invalid API call is a 404 naming the function that has nothing for the symbol (our parameters are validated first)', () => {
  const result = av('error-invalid-call.json');
  assert.equal(result.kind, 'error');
  assert.equal(result.kind === 'error' && result.error.code, 'SYMBOL_NOT_FOUND');
  assert.equal(result.kind === 'error' && result.error.message, 'Alpha Vantage has no RSI data for this symbol');
  assert.equal(result.kind === 'error' && driftOf(result.error), undefined);
  const unnamed = classifyAlphaVantageBody({ 'Error Message': 'Invalid API call. Please retry.' });
  assert.equal(unnamed.kind === 'error' && unnamed.error.message, 'Alpha Vantage has no such data for this symbol');
});

test('an error message of unknown wording is an unreadable answer, counted', () => {
  const result = classifyAlphaVantageBody({ 'Error Message': 'Something else went wrong.' });
  assert.equal(result.kind === 'error' && result.error.code, 'UPSTREAM_ERROR');
  assert.equal(result.kind === 'error' && driftOf(result.error), 'error-message');
});

test('a key problem is an upstream error whose message names the variable, not the key', () => {
  const result = av('error-apikey.json');
  assert.equal(result.kind === 'error' && result.error.code, 'UPSTREAM_ERROR');
  assert.match(result.kind === 'error' ? result.error.message : '', /ALPHA_VANTAGE_API_KEY/);
});

test('limit bodies are refusals naming the windows their numbers give, whatever else they say', () => {
  const windowsOf = (body: unknown) => {
    const result = classifyAlphaVantageBody(body);
    assert.equal(result.kind, 'refusal', JSON.stringify(body));
    return result.kind === 'refusal' ? result.windows : 'not a refusal';
  };
  // Recorded: sent after five calls in a minute, though it names the day too (the client escalates).
  assert.deepEqual(windowsOf(recording('alpha-vantage', 'note-5-per-minute-500-per-day').json), ['minute', 'day']);
  // Recorded December 2025: "sparingly", "premium plans", "unlock all premium endpoints" and "(25 requests per day)".
  assert.deepEqual(windowsOf(recording('alpha-vantage', 'information-daily-cap-2025-12').json), ['day']);
  assert.deepEqual(windowsOf(fixture('alpha-vantage', 'information-burst.json')), ['second']);
  assert.deepEqual(windowsOf({ Note: 'We allow 75 API calls per minute on this plan.' }), ['minute']);
  assert.deepEqual(windowsOf({ Information: 'Our standard API call frequency is 5 calls a minute.' }), ['minute']);
  assert.deepEqual(windowsOf({ Information: 'Please slow down: 2 requests per second at most, 25 requests per day.' }), ['second', 'day']);
});

test('a notice naming no window is a refusal of unknown window; data with a notice beside it is data', () => {
  const unknown = classifyAlphaVantageBody({
    Information: 'Something new happened. Visit https://www.alphavantage.co/premium/ to unlock all premium endpoints.',
  });
  assert.deepEqual(unknown.kind === 'refusal' && unknown.windows, []);
  assert.equal(classifyAlphaVantageBody({ 'Global Quote': { '01. symbol': 'IBM' }, Information: 'x' }).kind, 'data');
});

test('a premium-only function is a configuration problem, not a refusal', () => {
  const result = av('information-premium.json');
  assert.equal(result.kind === 'error' && result.error.code, 'PROVIDER_NOT_CONFIGURED');
});

test('a key problem in an Information body is a key error, not a refusal', () => {
  for (const text of [
    'the parameter apikey is invalid or missing.',
    'The **demo** API key is for demo purposes only. Please claim your free API key.',
  ]) {
    const result = classifyAlphaVantageBody({ Information: text });
    assert.equal(result.kind === 'error' && result.error.code, 'UPSTREAM_ERROR', text);
  }
});

test('non-objects, arrays and empty objects are upstream errors, each an unreadable answer with its reason', () => {
  const cases: Array<[unknown, string]> = [
    [undefined, 'not-json'],
    [null, 'body-not-object'],
    ['text', 'body-not-object'],
    [42, 'body-not-object'],
    [[], 'body-not-object'],
    [{}, 'empty-object'],
  ];
  for (const [body, drift] of cases) {
    const result = classifyAlphaVantageBody(body);
    assert.equal(result.kind === 'error' && result.error.code, 'UPSTREAM_ERROR', JSON.stringify(body));
    assert.equal(result.kind === 'error' && driftOf(result.error), drift, JSON.stringify(body));
  }
});

test('a key problem is not drift: the configuration, not the wire format, is wrong', () => {
  const result = av('error-apikey.json');
  assert.equal(result.kind === 'error' && driftOf(result.error), undefined);
});

test('a CSV answer is CSV when it has a header line; JSON sent to a CSV call is classified as JSON, data there being unreadable', () => {
  const text = fixtureText('recorded/alpha-vantage', 'global-quote-ibm.csv');
  assert.deepEqual(classifyAlphaVantageCsv(text, undefined), { kind: 'csv', text });
  const premium = recording('alpha-vantage', 'information-premium-endpoint-2024-10').json;
  assert.equal(classifyAlphaVantageCsv(JSON.stringify(premium), premium).kind, 'error');
  const note = recording('alpha-vantage', 'note-5-per-minute-500-per-day').json;
  assert.equal(classifyAlphaVantageCsv(JSON.stringify(note), note).kind, 'refusal');
  const data = fixture('alpha-vantage', 'global-quote-msft.json');
  const unreadable = classifyAlphaVantageCsv(JSON.stringify(data), data);
  assert.ok(unreadable.kind === 'error' && driftOf(unreadable.error) === 'csv-json');
  for (const bad of ['', '<html><body>Oops</body></html>', 'just one column\r\n']) {
    const classified = classifyAlphaVantageCsv(bad, undefined);
    assert.ok(classified.kind === 'error' && driftOf(classified.error) === 'csv-header', JSON.stringify(bad));
  }
});
