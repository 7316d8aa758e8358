// The convention the docs' examples follow (markdown-examples.ts), read from pages made up here: what counts as
// an example, its answer, and what breaks the convention.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageExamples, shapeProblems } from './markdown-examples.js';

const fence = (lang: string, body: string) => `\`\`\`${lang}\n${body}\n\`\`\``;

test('a curl block and the answer after it: json, http or Server-Sent Events', () => {
  const page = [
    '# A page',
    '<!-- examples-env: BROKER=tastytrade BROKER_TOKEN=a=b CLIENT_KEYS="agents\n  sha256=00 share=2" -->',
    fence('sh', "curl 'http://127.0.0.1:3000/api/system/live'"),
    'Prose between is fine.',
    fence('json', '{ "status": "live" }'),
    fence('sh', "curl -i 'http://127.0.0.1:3000/api/nope' \\\n  -H 'X-Request-Id: abc'"),
    fence('http', 'HTTP/1.1 404 Not Found\nX-Request-Id: abc\nAge: …\n\n{ "error": { "code": "NOT_FOUND", "status": 404 } }'),
    fence('sh', "curl -N 'http://127.0.0.1:3000/api/stream?status=true'"),
    fence('text', 'retry: 3000\n\nid: 1-1\nevent: status\ndata: {"status":"ok"}'),
    fence('sh', 'npm start'),
    fence('json', '{ "not": "an answer to anything" }'),
  ].join('\n\n');
  const { env, examples, problems } = pageExamples(page);
  assert.deepEqual(problems, []);
  assert.deepEqual(env, { BROKER: 'tastytrade', BROKER_TOKEN: 'a=b', CLIENT_KEYS: 'agents sha256=00 share=2' });
  assert.equal(examples.length, 3);
  assert.deepEqual(examples[0]?.answer, { status: 200, headers: [], body: { status: 'live' } });
  assert.match(examples[1]?.command ?? '', /\\\n {2}-H 'X-Request-Id: abc'$/);
  assert.deepEqual(examples[1]?.answer.headers, [
    ['X-Request-Id', 'abc'],
    ['Age', undefined],
  ]);
  assert.equal(examples[1]?.answer.status, 404);
  assert.deepEqual(examples[2]?.answer.events, [{ event: 'status', data: { status: 'ok' } }]);
});

test('an error body shown as json states its own status', () => {
  const page = `${fence('sh', "curl 'http://127.0.0.1:3000/api/provider-a/quote'")}\n\n${fence('json', '{"error":{"status":400}}')}`;
  assert.equal(pageExamples(page).examples[0]?.answer.status, 400);
});

test('a curl example without its answer, with two commands, or with an answer that is not JSON breaks the convention', () => {
  const page = [
    fence('sh', "curl 'http://127.0.0.1:3000/a'"),
    fence('sh', "curl 'http://127.0.0.1:3000/b'\ncurl 'http://127.0.0.1:3000/c'"),
    fence('json', '{}'),
    fence('sh', "curl 'http://127.0.0.1:3000/d'"),
    fence('json', '{"price": "1.00", …}'),
    fence('sh', "curl 'http://127.0.0.1:3000/e'"),
    fence('http', '200 OK'),
  ].join('\n\n');
  const { examples, problems } = pageExamples(page);
  assert.equal(examples.length, 0);
  assert.equal(problems.length, 4, problems.join('\n'));
  assert.match(problems[0] ?? '', /not followed by its answer/);
  assert.match(problems[1] ?? '', /holds one command \(found 2\)/);
  assert.match(problems[2] ?? '', /not JSON/);
  assert.match(problems[3] ?? '', /status line/);
});

test('an answer has the shape shown when it holds every key path shown, with the same types', () => {
  const shown = { quotes: { AAPL: { last: 1.5, volume: null } }, missing: ['X'] };
  assert.deepEqual(shapeProblems(shown, { quotes: { AAPL: { last: 2, volume: null, bid: 1 } }, missing: [] }), [
    '$.missing[] is not in the answer',
  ]);
  assert.deepEqual(shapeProblems(shown, { quotes: { AAPL: { last: 2, volume: null } }, missing: ['Y', 'Z'] }), []);
  assert.deepEqual(shapeProblems(shown, { quotes: { AAPL: { last: '2', volume: null } }, missing: ['Y'] }), [
    '$.quotes.AAPL.last is string in the answer, number on the page',
  ]);
});
