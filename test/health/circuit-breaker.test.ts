import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, BudgetExhaustedError, UpstreamRefusalError } from '../../src/core/errors.js';
import { CircuitBreaker, CircuitOpenError, isSickFailure } from '../../src/health/circuit-breaker.js';
import { UpstreamTransportError } from '../../src/core/errors.js';
import { UpstreamHealth } from '../../src/health/upstream-health.js';

function clock() {
  const c = { t: 1_000_000, now: () => c.t };
  return c;
}

const sick = () => Promise.reject(new ApiError('UPSTREAM_ERROR', 'HTTP 503'));
const ok = () => Promise.resolve('ok');

async function failTimes(breaker: CircuitBreaker, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) await assert.rejects(breaker.run(sick), { code: 'UPSTREAM_ERROR' });
}

test('what counts as the upstream being sick', () => {
  const transport = new UpstreamTransportError('X', 'reset', new Error('socket hang up'));
  assert.equal(isSickFailure(transport), true);
  assert.equal(isSickFailure(new UpstreamTransportError('X', 'timeout', null)), true);
  assert.equal(isSickFailure(new ApiError('UPSTREAM_TIMEOUT', 't')), true);
  assert.equal(isSickFailure(new ApiError('UPSTREAM_ERROR', 'unparseable')), true);
  // A broker adapter rewraps a transport failure: the cause still tells.
  assert.equal(isSickFailure(new ApiError('BROKER_UNAVAILABLE', 'gateway down', { cause: transport })), true);
  assert.equal(isSickFailure(new ApiError('BROKER_UNAVAILABLE', 'not logged in')), false);
  assert.equal(isSickFailure(new ApiError('SYMBOL_NOT_FOUND', 'no such symbol')), false);
  assert.equal(isSickFailure(new ApiError('INVALID_PARAMETER', 'bad')), false);
  assert.equal(isSickFailure(new BudgetExhaustedError('spent', 10)), false);
  assert.equal(isSickFailure(new UpstreamRefusalError('429', 10)), false);
  assert.equal(isSickFailure(new CircuitOpenError('X', 'UPSTREAM_ERROR', 1)), false);
  assert.equal(isSickFailure(new TypeError('cannot read properties of undefined')), true);
});

test('opens after N consecutive sick failures and then fails fast without calling', async () => {
  const c = clock();
  const breaker = new CircuitBreaker('Alpha', { failureThreshold: 3, cooldownMs: 5_000, jitter: 0, now: c.now });
  await failTimes(breaker, 2);
  assert.equal(breaker.snapshot().state, 'closed');
  await failTimes(breaker, 1);
  const snap = breaker.snapshot();
  assert.equal(snap.state, 'open');
  assert.equal(snap.opened, 1);
  assert.equal(snap.nextProbeAt, new Date(c.t + 5_000).toISOString());

  let called = 0;
  const error = await breaker.run(async () => (called += 1)).catch((e: unknown) => e);
  assert.ok(error instanceof CircuitOpenError);
  assert.equal(error.code, 'UPSTREAM_ERROR');
  assert.equal(error.retryAfterSeconds, 5);
  assert.equal(called, 0);
  assert.equal(breaker.snapshot().rejected, 1);
  assert.doesNotMatch(error.message, /http|:\/\//i);
});

test('a success in between resets the run; caller errors and refusals neither open nor reset it', async () => {
  const breaker = new CircuitBreaker('B', { failureThreshold: 3, jitter: 0, now: clock().now });
  await failTimes(breaker, 2);
  await breaker.run(ok);
  await failTimes(breaker, 2);
  assert.equal(breaker.snapshot().state, 'closed');
  for (const e of [new ApiError('SYMBOL_NOT_FOUND', 'x'), new BudgetExhaustedError('spent', 1), new UpstreamRefusalError('429', 1)]) {
    await assert.rejects(breaker.run(() => Promise.reject(e)));
  }
  assert.equal(breaker.snapshot().state, 'closed');
  assert.equal(breaker.snapshot().consecutiveFailures, 2);
  await failTimes(breaker, 1);
  assert.equal(breaker.snapshot().state, 'open');
});

test('after the cooldown exactly one probe goes out; the others wait for it and go once it succeeds', async () => {
  const c = clock();
  const breaker = new CircuitBreaker('C', { failureThreshold: 1, cooldownMs: 1_000, jitter: 0, now: c.now });
  await failTimes(breaker, 1);
  c.t += 1_000;
  assert.equal(breaker.snapshot().state, 'half_open');
  let release!: (v: string) => void;
  let calls = 0;
  const probe = breaker.run(() => {
    calls += 1;
    return new Promise<string>((resolve) => (release = resolve));
  });
  const counted = (value: string) => async () => {
    calls += 1;
    return value;
  };
  const waiting = [breaker.run(counted('a')), breaker.run(counted('b'))];
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(calls, 1, 'only the probe is out');
  release('back');
  assert.deepEqual(await Promise.all([probe, ...waiting]), ['back', 'a', 'b']);
  assert.equal(breaker.snapshot().state, 'closed');
});

test('when the probe fails, the calls that waited for it fail fast', async () => {
  const c = clock();
  const breaker = new CircuitBreaker('C2', { failureThreshold: 1, cooldownMs: 1_000, jitter: 0, now: c.now });
  await failTimes(breaker, 1);
  c.t += 1_000;
  let fail!: () => void;
  const probe = breaker.run(() => new Promise<string>((_resolve, reject) => (fail = () => reject(new ApiError('UPSTREAM_TIMEOUT', 't')))));
  let called = false;
  const waiter = breaker.run(async () => (called = true));
  await new Promise((resolve) => setImmediate(resolve));
  fail();
  await assert.rejects(probe, { code: 'UPSTREAM_TIMEOUT' });
  await assert.rejects(waiter, CircuitOpenError);
  assert.equal(called, false);
  assert.equal(breaker.snapshot().state, 'open');
});

test('a failed probe reopens for longer, doubling up to the cap', async () => {
  const c = clock();
  const breaker = new CircuitBreaker('D', { failureThreshold: 1, cooldownMs: 1_000, maxCooldownMs: 3_000, jitter: 0, now: c.now });
  await failTimes(breaker, 1);
  const waits: number[] = [];
  for (let i = 0; i < 4; i += 1) {
    const until = Date.parse(breaker.snapshot().nextProbeAt as string);
    waits.push(until - c.t);
    c.t = until;
    await failTimes(breaker, 1); // the probe fails
  }
  assert.deepEqual(waits, [1_000, 2_000, 3_000, 3_000]);
  assert.equal(breaker.snapshot().opened, 5);
});

test('a probe that ends without a verdict (budget refusal) lets the next call probe', async () => {
  const c = clock();
  const breaker = new CircuitBreaker('E', { failureThreshold: 1, cooldownMs: 100, jitter: 0, now: c.now });
  await failTimes(breaker, 1);
  c.t += 100;
  await assert.rejects(
    breaker.run(() => Promise.reject(new BudgetExhaustedError('spent', 1))),
    BudgetExhaustedError,
  );
  assert.equal(await breaker.run(ok), 'ok');
  assert.equal(breaker.snapshot().state, 'closed');
});

test('jitter keeps the cooldown within its spread', async () => {
  for (const r of [0, 0.5, 0.999]) {
    const c = clock();
    const breaker = new CircuitBreaker('F', { failureThreshold: 1, cooldownMs: 10_000, jitter: 0.2, now: c.now, random: () => r });
    await failTimes(breaker, 1);
    const wait = Date.parse(breaker.snapshot().nextProbeAt as string) - c.t;
    assert.ok(wait >= 8_000 && wait <= 12_000, String(wait));
  }
});

test('UpstreamHealth guards each upstream separately, records no call for fast fails, and a real success elsewhere closes it', async () => {
  const health = new UpstreamHealth({
    breaker: { failureThreshold: 2, cooldownMs: 60_000 },
    openCode: (u) => (u === 'ibkr' ? 'BROKER_UNAVAILABLE' : 'UPSTREAM_ERROR'),
  });
  for (let i = 0; i < 2; i += 1) await assert.rejects(health.track('ibkr', sick));
  assert.equal(health.circuits().ibkr?.state, 'open');
  await assert.rejects(health.track('ibkr', ok), { name: 'CircuitOpenError', code: 'BROKER_UNAVAILABLE' });
  assert.equal(health.state('ibkr').calls, 2, 'the refused call was never sent');
  // Another upstream is untouched.
  assert.equal(await health.track('yahoo', ok), 'ok');
  // An aggregate opts out of its own breaker.
  for (let i = 0; i < 3; i += 1) await assert.rejects(health.track('agg', sick, { breaker: false }));
  assert.equal(health.circuits().agg, undefined);
  // A health check that reached the broker proves it answers.
  health.recordSuccess('ibkr');
  assert.equal(health.circuits().ibkr?.state, 'closed');
  assert.equal(await health.track('ibkr', ok), 'ok');
  // Budget refusals are not upstream calls.
  await assert.rejects(health.track('av', () => Promise.reject(new BudgetExhaustedError('spent', 1))));
  assert.equal(health.state('av').errors, 0);
});
