// The HTTP client against a simulator's raw faults: every failure is classified, none outlives the
// deadline, and a huge body is cut at the cap rather than read to the end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { type FaultKind, SimulatedUpstream } from '../../../src/sandbox/simulated-upstream.js';
import { type TransportFailure, UpstreamTransportError } from '../../../src/core/errors.js';
import { HttpClient } from '../../../src/upstreams/http-client.js';

async function setup(t: import('node:test').TestContext, maxBodyBytes?: number) {
  const sim = new SimulatedUpstream({ name: 'raw', handler: () => ({ status: 200, body: { ok: true } }) });
  await sim.listen();
  t.after(() => sim.close());
  const http = new HttpClient({ name: 'Raw upstream', timeoutMs: 300, logger: pino({ level: 'silent' }), maxBodyBytes });
  t.after(() => http.close());
  return { sim, http };
}

const cases: [string, { fault?: FaultKind; latencyMs?: number }, TransportFailure][] = [
  ['latency beyond the deadline', { latencyMs: 2_000 }, 'timeout'],
  ['slow drip', { fault: 'slow-drip' }, 'timeout'],
  ['dropped connection', { fault: 'drop' }, 'reset'],
  ['reset mid-body', { fault: 'reset-mid-body' }, 'reset'],
  ['huge body', { fault: 'huge' }, 'too_large'],
];

for (const [name, faults, failure] of cases) {
  test(`HttpClient: ${name} is a ${failure} failure within the deadline`, async (t) => {
    const { sim, http } = await setup(t);
    sim.setFaults(faults);
    const started = performance.now();
    const error = await http.request(`${sim.origin}/x?apikey=secret`).catch((e: unknown) => e);
    const ms = performance.now() - started;
    assert.ok(error instanceof UpstreamTransportError, String(error));
    assert.equal(error.failure, failure);
    assert.equal(error.code, failure === 'timeout' ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR');
    assert.doesNotMatch(error.message, /secret|127\.0\.0\.1/);
    assert.ok(ms < 1_500, `${Math.round(ms)} ms`);
    // The client is still usable once the upstream behaves.
    sim.clearFaults();
    assert.deepEqual((await http.request(`${sim.origin}/x`)).json, { ok: true });
  });
}

test('HttpClient: the cap is what cuts the huge body (a bigger cap reads it whole)', async (t) => {
  const { sim, http } = await setup(t, 40 * 1024 * 1024);
  sim.setFaults({ fault: 'huge' });
  const res = await http.request(`${sim.origin}/x`, { timeoutMs: 10_000 });
  assert.ok(res.text.length > 32 * 1024 * 1024);
});

test('HttpClient: connection refused is unreachable, at once', async (t) => {
  const { sim, http } = await setup(t);
  const origin = sim.origin;
  await sim.close();
  const started = performance.now();
  const error = await http.request(`${origin}/x`).catch((e: unknown) => e);
  assert.ok(error instanceof UpstreamTransportError);
  assert.equal(error.failure, 'unreachable');
  assert.ok(performance.now() - started < 300);
});
