import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyGatewayAnswer } from '../../../src/upstreams/ibkr/classify-response.js';
import { fixture } from '../../helpers/fixtures.js';

test('401 means nobody is logged in to the gateway, whatever the body', () => {
  assert.deepEqual(classifyGatewayAnswer(401, {}, undefined), { kind: 'logged_out' });
});

test('"Init session first" means logged in without a brokerage session', () => {
  assert.deepEqual(classifyGatewayAnswer(400, {}, fixture('ibkr', 'init-session-first.json')), { kind: 'no_session' });
  assert.deepEqual(classifyGatewayAnswer(500, {}, { error: 'not authenticated' }), { kind: 'no_session' });
});

test('429 carries Retry-After when the gateway sends one', () => {
  assert.deepEqual(classifyGatewayAnswer(429, { 'retry-after': '12' }, undefined), { kind: 'rate_limited', retryAfterSeconds: 12 });
  assert.deepEqual(classifyGatewayAnswer(429, {}, { error: 'Too many requests' }), { kind: 'rate_limited', retryAfterSeconds: undefined });
});

test('JSON 2xx is data; an HTML 200 or a 5xx is an error; "No symbol found" is an answer', () => {
  assert.equal(classifyGatewayAnswer(200, {}, []).kind, 'ok');
  assert.deepEqual(classifyGatewayAnswer(200, {}, undefined), {
    kind: 'error',
    status: 200,
    message: 'the IBKR gateway sent a body that is not JSON',
    drift: 'not-json',
  });
  assert.deepEqual(
    classifyGatewayAnswer(503, {}, undefined),
    { kind: 'error', status: 503, message: 'the IBKR gateway answered HTTP 503' },
    'an HTTP failure is no drift',
  );
  assert.equal(classifyGatewayAnswer(411, {}, undefined).kind, 'error');
  assert.equal(classifyGatewayAnswer(500, {}, fixture('ibkr', 'secdef-no-symbol.json')).kind, 'ok');
});
