import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import FlatQueue from 'flatqueue';
import { DemandTracker } from '../../src/services/demand-tracker.js';

const HALF_LIFE = 10 * 60_000;

/** The ranking's meaning, written plainly: each key's count, decayed with the half-life since it was last noted. */
class ReferenceDemand {
  readonly counts = new Map<string, { value: number; at: number }>();

  note(key: string, now: number): void {
    this.counts.set(key, { value: this.value(key, now) + 1, at: now });
  }

  value(key: string, now: number): number {
    const count = this.counts.get(key);
    return count === undefined ? 0 : count.value * 2 ** (-(now - count.at) / HALF_LIFE);
  }
}

test('at its bound, a new key evicts a coldest key (decayed counts with the half-life), and every value stays the reference one', () => {
  const keys = fc.constantFrom(...Array.from({ length: 24 }, (_, i) => `K${i}`));
  const step = fc.oneof(
    { weight: 4, arbitrary: keys.map((key) => ({ key })) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 * HALF_LIFE }).map((advance) => ({ advance })) },
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 10 }), fc.array(step, { maxLength: 300 }), (maxKeys, steps) => {
      const clock = { now: 1_000_000 };
      const tracker = new DemandTracker(HALF_LIFE, () => clock.now, maxKeys);
      const reference = new ReferenceDemand();
      for (const s of steps) {
        if ('advance' in s) {
          clock.now += s.advance;
          continue;
        }
        const known = reference.counts.has(s.key);
        const before = [...reference.counts.keys()].map((key) => ({ key, value: reference.value(key, clock.now) }));
        tracker.note(s.key);
        reference.note(s.key, clock.now);
        if (!known && before.length >= maxKeys) {
          const evicted = before.filter(({ key }) => tracker.value(key) === 0);
          assert.equal(evicted.length, 1, 'one key evicted');
          const least = Math.min(...before.map(({ value }) => value));
          assert.ok(evicted[0]!.value <= least * (1 + 1e-9), `${evicted[0]!.key} (${evicted[0]!.value}) is not a coldest key (${least})`);
          reference.counts.delete(evicted[0]!.key);
        }
        for (const key of reference.counts.keys()) {
          const expected = reference.value(key, clock.now);
          assert.ok(Math.abs(tracker.value(key) - expected) <= expected * 1e-9, `${key}: ${tracker.value(key)} against ${expected}`);
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('a flood of new keys at the bound of 10,000 reads a few entries per key, not all 10,000 (work counted, not timed)', (t) => {
  // Every entry the tracker reads: its map's, by lookup or by iteration, and its heap's pushes and pops
  // (each of those O(log n) in a binary heap).
  let reads = 0;
  class CountingMap<K, V> extends Map<K, V> {
    override get(key: K): V | undefined {
      reads += 1;
      return super.get(key);
    }
    override *[Symbol.iterator](): MapIterator<[K, V]> {
      for (const entry of super.entries()) {
        reads += 1;
        yield entry;
      }
    }
    override entries(): MapIterator<[K, V]> {
      return this[Symbol.iterator]();
    }
  }
  const { push, pop } = FlatQueue.prototype;
  t.after(() => Object.assign(FlatQueue.prototype, { push, pop }));
  Object.assign(FlatQueue.prototype, {
    push(this: FlatQueue<unknown>, item: unknown, priority: number) {
      reads += 1;
      push.call(this, item, priority);
    },
    pop(this: FlatQueue<unknown>) {
      reads += 1;
      return pop.call(this);
    },
  });

  const clock = { now: 1_000_000 };
  const tracker = new DemandTracker(HALF_LIFE, () => clock.now);
  (tracker as unknown as { counts: Map<string, unknown> }).counts = new CountingMap();
  for (let i = 0; i < 10_000; i += 1) {
    tracker.note(`FILL${i}`);
    if (i % 100 === 0) clock.now += 1_000;
  }
  // A dashboard's few keys stay hot meanwhile, noted again and again: their queued scores go stale.
  for (let i = 0; i < 2_000; i += 1) tracker.note(`FILL${i % 50}`);
  const flood = 2_000;
  reads = 0;
  for (let i = 0; i < flood; i += 1) {
    clock.now += 10;
    tracker.note(`NEW${i}`);
    tracker.note(`FILL${i % 50}`);
  }
  const perKey = reads / flood;
  assert.ok(perKey <= 8, `${perKey.toFixed(1)} entries read per new key`);
  assert.ok(tracker.value('FILL0') > 1 && tracker.value('NEW1999') === 1, 'the hot keys and the newest stay');
  assert.equal(tracker.value('FILL50'), 0, 'the coldest went');
  assert.ok(tracker.value('FILL9999') > 0, 'the warmest of the rest stayed');
});
