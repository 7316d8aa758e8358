// After a run of bad requests: nothing the callers sent may count against an upstream. No circuit opened
// or counted a failure, no upstream shows a last error, and the service reports itself healthy.
import assert from 'node:assert/strict';
import type { RunningApp } from './app.js';

export async function assertNoUpstreamBlamed(running: RunningApp): Promise<void> {
  for (const [name, circuit] of Object.entries(running.app.deps.health.circuits())) {
    assert.equal(circuit.state, 'closed', `${name} circuit`);
    assert.equal(circuit.opened, 0, `${name} circuit opened`);
    assert.equal(circuit.consecutiveFailures, 0, `${name} failures counted`);
  }
  for (const [name, state] of Object.entries(running.app.deps.health.all())) assert.equal(state.lastError, null, `${name} last error`);
  const status = await running.get('/api/system/status');
  assert.equal(status.status, 200);
  assert.equal(status.body.status, 'ok', JSON.stringify(status.body.reasons));
}
