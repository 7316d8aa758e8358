// Validates route output against the route's own response schema (the OpenAPI source).
import assert from 'node:assert/strict';
import type { TSchema } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { FreshnessSchema } from '../../../src/routes/schemas.js';

if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v)));

export function assertMatches(schema: TSchema, value: unknown): void {
  // The shared schemas the route schemas refer to (registered with app.addSchema).
  const errors = [...Value.Errors(schema, [FreshnessSchema], value)].slice(0, 3).map((e) => `${e.path}: ${e.message}`);
  assert.deepEqual(errors, [], JSON.stringify(value).slice(0, 500));
}
