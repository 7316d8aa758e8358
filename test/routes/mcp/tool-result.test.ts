// A tool's answer as an MCP result: cut at whole rows to the byte limit (arrays, objects of rows, CSV lines, a
// collection nested in the answer), saying what was left out; and any error as one generic shape, so an error code
// added later reaches agents unchanged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { ApiError } from '../../../src/core/errors.js';
import { errorResult, outputSchema, sizedResult } from '../../../src/routes/mcp/tool-result.js';
import type { ToolAnswer } from '../../../src/routes/mcp/tool.js';

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const hint = (returned: number) => `Ask with limit=${returned}.`;

function answer(content: Record<string, unknown>, path: string[]): ToolAnswer {
  return { content, rows: { path, hint }, text: () => 'Some rows.' };
}

test('an answer that fits is sent whole, with its text', () => {
  const result = sizedResult(answer({ rows: [1, 2, 3] }, ['rows']), 4096);
  assert.deepEqual(result, { content: [{ type: 'text', text: 'Some rows.' }], structuredContent: { rows: [1, 2, 3] } });
});

test('a long answer keeps the most rows that fit, first ones first, and says how many were left out and how to ask for them', () => {
  const rows = Array.from({ length: 2000 }, (_, i) => ({ time: `2026-01-${i}`, close: i * 1.5 }));
  for (const max of [4096, 10_000, 32_768]) {
    const result = sizedResult(answer({ symbol: 'IBM', rows }, ['rows']), max);
    const { rows: kept, truncated, symbol } = result.structuredContent as any;
    assert.ok(bytes(result) <= max, `${bytes(result)} > ${max}`);
    assert.equal(symbol, 'IBM');
    assert.deepEqual(kept, rows.slice(0, kept.length));
    assert.deepEqual(truncated, {
      rows: 'rows',
      returned: kept.length,
      leftOut: 2000 - kept.length,
      hint: `Ask with limit=${kept.length}.`,
    });
    // The most that fit: one more row (and its comma) would not have.
    assert.ok(bytes(result) + bytes(rows[kept.length]) + 1 > max, `${bytes(result)} bytes with ${kept.length} rows`);
    assert.match(
      (result.content[0] as { text: string }).text,
      new RegExp(`${kept.length} of 2000 rows sent, ${2000 - kept.length} left out\\. Ask with`),
    );
  }
});

test('rows are cut where they are: an object of rows keyed by date, nested in the answer, or the lines of CSV after its header', () => {
  const series = Object.fromEntries(
    Array.from({ length: 300 }, (_, i) => [`2026-02-${String(i).padStart(3, '0')}`, { '4. close': `${i}.0000` }]),
  );
  const nested = sizedResult(
    answer({ data: { 'Meta Data': { '1. Symbol': 'IBM' }, 'Time Series (Daily)': series } }, ['data', 'Time Series (Daily)']),
    4096,
  );
  const data = (nested.structuredContent as any).data;
  assert.deepEqual(data['Meta Data'], { '1. Symbol': 'IBM' });
  const kept = Object.keys(data['Time Series (Daily)']);
  assert.deepEqual(kept, Object.keys(series).slice(0, kept.length));
  assert.equal((nested.structuredContent as any).truncated.rows, 'data.Time Series (Daily)');

  const csv = `timestamp,close\r\n${Array.from({ length: 400 }, (_, i) => `2026-03-${i},${i}`).join('\r\n')}\r\n`;
  const cut = sizedResult(answer({ data: csv }, ['data']), 4096);
  const lines = ((cut.structuredContent as any).data as string).split('\r\n').filter(Boolean);
  assert.equal(lines[0], 'timestamp,close');
  assert.equal((cut.structuredContent as any).truncated.returned, lines.length - 1);
  assert.equal((cut.structuredContent as any).truncated.leftOut, 400 - (lines.length - 1));
});

test('an answer too long without rows to cut is an error result, never more than the limit', () => {
  const result = sizedResult({ content: { text: 'x'.repeat(10_000) }, text: () => 'Long.' }, 4096);
  assert.equal(result.isError, true);
  assert.ok(bytes(result) <= 4096);
  assert.match((result.structuredContent as any).error.message, /4096 bytes/);
});

test('any ApiError is the same error shape: code, message, wait and what to do, by code or by default; anything else INTERNAL_ERROR', () => {
  const spent = errorResult(new ApiError('QUOTA_EXHAUSTED', "provider A's budget is spent", { retryAfterSeconds: 12.2 }), false);
  assert.deepEqual(spent.structuredContent, {
    error: {
      code: 'QUOTA_EXHAUSTED',
      message: "provider A's budget is spent",
      retryAfterSeconds: 13,
      action: "The provider's call budget is spent: wait (get_service_status says when calls return); cached answers stay available.",
    },
  });
  assert.equal(spent.isError, true);
  assert.match(
    (spent.content[0] as { text: string }).text,
    /^QUOTA_EXHAUSTED: provider A's budget is spent\. Retry after 13 s\. The provider's call budget is spent/,
  );

  // A code this file does not know (one added to core/errors.ts later) still reaches the agent, with a default.
  const later = Object.assign(new ApiError('RATE_LIMITED', 'your share is spent', { retryAfterSeconds: 30 }), { code: 'A_LATER_CODE' });
  assert.deepEqual(errorResult(later, false).structuredContent, {
    error: { code: 'A_LATER_CODE', message: 'your share is spent', retryAfterSeconds: 30, action: 'Wait, then call again.' },
  });
  const noWait = Object.assign(new ApiError('INVALID_PARAMETER', 'no'), { code: 'ANOTHER_CODE' });
  assert.equal((errorResult(noWait, false).structuredContent as any).error.action, 'Do not call again unchanged.');

  // An error's full words (the outbound proxy, the networks allowed) go to a caller the broker rules admit only.
  const proxied = new ApiError('UPSTREAM_ERROR', 'provider A was not reached: the proxy at 10.0.0.9:3128 refused', {
    publicMessage: 'provider A could not be reached',
  });
  assert.equal((errorResult(proxied, false).structuredContent as any).error.message, 'provider A could not be reached');
  assert.match((errorResult(proxied, true).structuredContent as any).error.message, /10\.0\.0\.9/);
  assert.ok(!JSON.stringify(errorResult(proxied, false)).includes('10.0.0.9'));

  const crash = errorResult(new TypeError("Cannot read properties of undefined (reading 'x') at /srv/app/src/x.ts:1:1"), false);
  assert.deepEqual((crash.structuredContent as any).error.code, 'INTERNAL_ERROR');
  assert.ok(!JSON.stringify(crash).includes('/srv/app'), 'no path or stack');
});

test('an output schema admits the answer, or the error alone, and refuses an answer lacking what it always holds', () => {
  const schema = outputSchema({ symbol: Type.String(), note: Type.Optional(Type.String()) });
  const check = new Ajv({ strict: false }).compile(JSON.parse(JSON.stringify(schema)));
  assert.ok(check({ symbol: 'IBM' }));
  assert.ok(check({ symbol: 'IBM', truncated: { rows: 'x', returned: 1, leftOut: 2, hint: 'h' } }));
  assert.ok(check(errorResult(new ApiError('SYMBOL_NOT_FOUND', 'no'), false).structuredContent));
  assert.ok(!check({ note: 'no symbol' }));
  assert.ok(!check({ symbol: 'IBM', extra: 1 }));
  // The brief one tools/list sends admits both, naming the answer's properties.
  const brief = new Ajv({ strict: false }).compile(JSON.parse(JSON.stringify(outputSchema({ symbol: Type.String() }, true))));
  assert.ok(brief({ symbol: 'IBM' }) && brief(errorResult(new ApiError('SYMBOL_NOT_FOUND', 'no'), false).structuredContent));
});
