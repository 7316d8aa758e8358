// NO_PROXY's forms as undici's EnvHttpProxyAgent (dispatcher/env-http-proxy-agent.js: a name covers its
// subdomains, a leading . or *. is dropped, host:port) and curl and Go read them, plus address ranges.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostEntries, hostRules } from '../../src/core/host-rules.js';

test('names: a name covers itself and every name under it; a leading dot or *. means the same; case and a final dot do not matter', () => {
  const rules = hostRules(hostEntries('example.com, .corp.example *.internal.test'));
  for (const host of [
    'example.com',
    'www.example.com',
    'a.b.example.com',
    'EXAMPLE.com',
    'example.com.',
    'corp.example',
    'x.corp.example',
    'internal.test',
    'api.internal.test',
  ])
    assert.equal(rules.matches(host, 443), true, host);
  for (const host of ['notexample.com', 'example.co', 'example.com.evil.test', 'corp.example.org'])
    assert.equal(rules.matches(host, 443), false, host);
});

test('ports: host:port, address:port and [v6]:port match that port only', () => {
  const rules = hostRules(['api.example.com:8443', '10.1.2.3:80', '[fd00::1]:8080']);
  assert.equal(rules.matches('api.example.com', 8443), true);
  assert.equal(rules.matches('api.example.com', 443), false);
  assert.equal(rules.matches('10.1.2.3', 80), true);
  assert.equal(rules.matches('10.1.2.3', 443), false);
  assert.equal(rules.matches('[fd00::1]', 8080), true);
  assert.equal(rules.matches('fd00::1', 8081), false);
});

test('addresses and CIDRs: IPv4 and IPv6, a target written as an address; a name is never resolved', () => {
  const rules = hostRules(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
  for (const host of ['10.0.0.1', '10.255.255.255', '192.168.1.7', '[fd12:3456::1]', 'fd00::2', '[::1]'])
    assert.equal(rules.matches(host, 443), true, host);
  for (const host of ['11.0.0.1', '192.168.1.8', 'fe80::1', 'ten.example.com']) assert.equal(rules.matches(host, 443), false, host);
});

test('* matches every host; an empty list none', () => {
  assert.equal(hostRules(['*']).matches('anything.example', 1), true);
  assert.equal(hostRules([]).matches('anything.example', 1), false);
  assert.equal(hostRules([]).empty, true);
  assert.deepEqual(hostEntries(' a.example ,, b.example\tc.example\n'), ['a.example', 'b.example', 'c.example']);
});

test('an entry that is none of these is refused with its text, not ignored', () => {
  for (const [entry, words] of [
    ['http://proxy.example.com', /not a host name/],
    ['10.0.0.0/33', /prefix length goes up to 32/],
    ['fd00::/129', /prefix length goes up to 128/],
    ['example.com/24', /write the host alone/],
    ['example.com:70000', /port outside 1 to 65535/],
    ['exa mple', /not a host name/],
  ] as const)
    assert.throws(() => hostRules([entry]), words, entry);
});
