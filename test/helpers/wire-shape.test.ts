// The shape comparison the simulator conformance tests rely on: it must see a missing key, an extra key
// and a changed type, and it must let tolerated variation through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareShapes, shapeOf } from './wire-shape.js';

const recorded = {
  meta: { price: 1.5, currency: 'USD', name: 'A' },
  rows: { '2024-05-10': { close: '1.0' }, '2024-05-09': { close: '2.0' } },
  bars: [1, null],
};

test('identical shapes, other values and other dates: no difference', () => {
  const simulated = { meta: { price: 9, currency: 'EUR', name: 'B' }, rows: { '2026-11-20': { close: '3.0' } }, bars: [2, 3] };
  assert.deepEqual(compareShapes(shapeOf(recorded), shapeOf(simulated)), []);
});

test('a missing key, an extra key and another type are each reported', () => {
  const simulated = { meta: { price: '1.5', name: 'B', extra: true }, rows: {}, bars: [] };
  const found = compareShapes(shapeOf(recorded), shapeOf(simulated))
    .map((d) => `${d.path} ${d.problem}`)
    .sort();
  assert.deepEqual(found, [
    '$.meta.currency missing in the simulator',
    '$.meta.extra not in the recorded answer',
    '$.meta.price other types',
  ]);
});

test('tolerances let a key be absent or carry the types reality shows', () => {
  const simulated = { meta: { price: 1, currency: null, name: 'B', extra: true }, rows: {}, bars: [] };
  assert.deepEqual(
    compareShapes(shapeOf(recorded), shapeOf(simulated), { '$.meta.currency': ['string', 'null'], '$.meta.extra': ['boolean'] }),
    [],
  );
});
