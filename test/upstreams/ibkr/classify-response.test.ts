import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyGatewayAnswer, refusalMeaning } from '../../../src/upstreams/ibkr/classify-response.js';
import { fixture } from '../../helpers/fixtures.js';
import { recording } from '../../helpers/recorded.js';

const meaningOf = (status: number, json: unknown) => {
  const answer = classifyGatewayAnswer(status, {}, json);
  return answer.kind === 'refused' ? answer.meaning : answer.kind;
};

test('401 is a refused login, whatever the body: empty, or the recorded "not authenticated"', () => {
  assert.deepEqual(classifyGatewayAnswer(401, {}, undefined), { kind: 'logged_out' });
  assert.equal(meaningOf(401, recording('ibkr', 'not-authenticated-401').json), 'logged_out');
});

test('the recorded "no brokerage session" wordings are fast paths, at any status', () => {
  for (const name of ['init-session-first-400', 'no-bridge-400']) {
    const r = recording('ibkr', name);
    assert.deepEqual(classifyGatewayAnswer(r.status, {}, r.json), {
      kind: 'refused',
      status: r.status,
      meaning: 'no_session',
      wording: (r.json as { error: string }).error,
      json: r.json,
    });
  }
  // ibind#104 writes it "No Bridge"; a 500 or even a 200 carrying the refusal is still one.
  assert.equal(meaningOf(400, { error: 'No Bridge' }), 'no_session');
  assert.equal(meaningOf(500, { error: 'not authenticated' }), 'no_session');
  assert.equal(meaningOf(200, fixture('ibkr', 'init-session-first.json')), 'no_session');
});

test('"No symbol found" is an answer about the input, and only that exact text; "query /accounts first" asks for the account list', () => {
  assert.equal(meaningOf(200, fixture('ibkr', 'secdef-no-symbol.json')), 'not_found');
  assert.equal(meaningOf(500, { error: 'No symbol found' }), 'not_found');
  assert.equal(refusalMeaning('No symbol found for AAPL, try again'), 'unknown', 'more than the clean "not found" is not one');
  assert.equal(meaningOf(500, { error: 'Please query /accounts first' }), 'accounts_first');
  assert.equal(refusalMeaning('Bad Request: please query /accounts first'), 'accounts_first');
});

test('a wording no pattern knows, or that two patterns claim, is unknown: the gateway confirms it, the order of patterns decides nothing', () => {
  const r = recording('ibkr', 'secdef-info-no-contracts-500');
  assert.equal(meaningOf(r.status, r.json), 'unknown');
  assert.equal(refusalMeaning('Init session first, then query /accounts first'), 'unknown');
});

test('data is data: the recorded tickle says "no bridge" inside, for its market data server, and is no refusal', () => {
  assert.equal(classifyGatewayAnswer(200, {}, recording('ibkr', 'tickle-authenticated').json).kind, 'ok');
  assert.equal(classifyGatewayAnswer(200, {}, []).kind, 'ok');
  assert.equal(classifyGatewayAnswer(200, {}, { error: '' }).kind, 'ok', 'an empty error text refuses nothing');
});

test('429 carries Retry-After when the gateway sends one', () => {
  assert.deepEqual(classifyGatewayAnswer(429, { 'retry-after': '12' }, undefined), { kind: 'rate_limited', retryAfterSeconds: 12 });
  assert.deepEqual(classifyGatewayAnswer(429, {}, { error: 'Too many requests' }), { kind: 'rate_limited', retryAfterSeconds: undefined });
});

test('an HTML 200 is drift; a 5xx without a JSON body is an HTTP failure, no drift', () => {
  assert.deepEqual(classifyGatewayAnswer(200, {}, undefined), {
    kind: 'error',
    status: 200,
    message: 'the IBKR gateway sent a body that is not JSON',
    drift: 'not-json',
  });
  assert.deepEqual(classifyGatewayAnswer(503, {}, undefined), {
    kind: 'error',
    status: 503,
    message: 'the IBKR gateway answered HTTP 503',
  });
  assert.equal(classifyGatewayAnswer(411, {}, undefined).kind, 'error');
});
