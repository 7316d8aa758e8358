import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactUrl } from '../src/logger.js';

test('a key a caller sends in the query string is redacted from the logged URL, wherever it stands', () => {
  assert.equal(redactUrl('/api/provider-a/query?function=RSI&apikey=ABC123&symbol=IBM'), '/api/provider-a/query?function=RSI&apikey=[REDACTED]&symbol=IBM');
  assert.equal(redactUrl('/api/provider-a/query?apikey=ABC123&apiKey=DEF&api_key=G&token=T'), '/api/provider-a/query?apikey=[REDACTED]&apiKey=[REDACTED]&api_key=[REDACTED]&token=[REDACTED]');
  assert.equal(redactUrl('/api/provider-a/query?APIKEY=abc#frag'), '/api/provider-a/query?APIKEY=[REDACTED]#frag');
  // Repeated calls give the same answer (no regex state carried between lines).
  for (let i = 0; i < 3; i += 1) assert.equal(redactUrl('/q?apikey=x'), '/q?apikey=[REDACTED]');
});

test('URLs without a caller key are returned as they are', () => {
  for (const url of ['/api/provider-a/quote?symbol=IBM', '/api/x?notapikey=1', '/api/x?myapikey=1', undefined]) assert.equal(redactUrl(url), url);
});
