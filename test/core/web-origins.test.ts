// BROKER_CORS_ORIGINS as a browser's Origin and Host headers meet it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOOPBACK_ORIGINS, parseOrigins, WebOrigins } from '../../src/core/web-origins.js';

test('the default admits loopback pages on any port and nothing else', () => {
  const origins = new WebOrigins(LOOPBACK_ORIGINS);
  for (const origin of ['http://localhost:5173', 'http://localhost', 'http://127.0.0.1:3000', 'http://[::1]:8080', 'HTTP://LOCALHOST:1'])
    assert.equal(origins.allows(origin), true, origin);
  for (const origin of [
    'https://localhost:5173',
    'http://localhost.evil.example',
    'http://evil.example',
    'http://127.0.0.2:3000',
    'http://127.0.0.1.nip.io',
    'null',
    '',
    'http://localhost:5173/path',
    'file://',
    'http://user@localhost:1',
  ])
    assert.equal(origins.allows(origin), false, origin);
});

test('listed origins: exact port, default port, any port', () => {
  const origins = new WebOrigins(['https://dash.example.com', 'http://nas.lan:8080', 'http://10.0.0.2:*']);
  assert.equal(origins.allows('https://dash.example.com'), true);
  assert.equal(origins.allows('https://dash.example.com:443'), true);
  assert.equal(origins.allows('https://dash.example.com:8443'), false);
  assert.equal(origins.allows('http://dash.example.com'), false);
  assert.equal(origins.allows('http://nas.lan:8080'), true);
  assert.equal(origins.allows('http://nas.lan'), false);
  assert.equal(origins.allows('http://10.0.0.2:9'), true);
});

test('a Host names this service when it is an address, a localhost name, or a listed host: a rebound name is not', () => {
  const origins = new WebOrigins(['http://nas.lan:8080']);
  for (const host of ['127.0.0.1:3000', '[::1]:3000', '192.168.1.10', 'localhost:3000', 'app.localhost', 'nas.lan:8080', 'NAS.LAN'])
    assert.equal(origins.isOwnHost(host), true, host);
  for (const host of [undefined, '', 'evil.example:3000', 'localhost.evil.example', 'nas.lan.evil.example', 'a b', '127.0.0.1:3000:1'])
    assert.equal(origins.isOwnHost(host), false, String(host));
});

test("the service's own origin is the one its Host and scheme make", () => {
  const origins = new WebOrigins([]);
  assert.equal(origins.isOwnOrigin('http://192.168.1.10:8080', '192.168.1.10:8080', 'http'), true);
  assert.equal(origins.isOwnOrigin('https://box.lan', 'box.lan:443', 'https'), true);
  assert.equal(origins.isOwnOrigin('http://192.168.1.10:8080', '192.168.1.10:8081', 'http'), false);
  assert.equal(origins.isOwnOrigin('https://192.168.1.10:8080', '192.168.1.10:8080', 'http'), false);
  assert.equal(origins.isOwnOrigin('http://x', undefined, 'http'), false);
});

test('an entry that is not an origin is refused, naming itself', () => {
  for (const bad of ['localhost:5173', 'http://', 'http://a b', 'ftp://x', 'http://x:99999', 'http://x/path', '*'])
    assert.throws(
      () => parseOrigins(['http://ok.example', bad]),
      (error: Error) => error.message.includes(`"${bad}"`),
      bad,
    );
});
