// BROKER_ALLOW_FROM's matcher and TRUST_PROXY's trust, held to node:net's BlockList (an independent
// implementation) on random addresses, and to the edges of every range the words stand for; the caller's address
// read before Fastify, to Fastify's own request.ip.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { test } from 'node:test';
import Fastify from 'fastify';
import fc from 'fast-check';
import { callerAddress, isLoopbackHost, namesProxies, networkMatcher, proxyTrust, trustProxyRisk } from '../../src/core/networks.js';

const PRIVATE_EDGES: [string, boolean][] = [
  ['9.255.255.255', false],
  ['10.0.0.0', true],
  ['10.255.255.255', true],
  ['11.0.0.0', false],
  ['172.15.255.255', false],
  ['172.16.0.0', true],
  ['172.31.255.255', true],
  ['172.32.0.0', false],
  ['192.167.255.255', false],
  ['192.168.0.0', true],
  ['192.168.255.255', true],
  ['192.169.0.0', false],
  ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
  ['fc00::', true],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
  ['fe00::', false],
  ['fe80::1', false],
  ['169.254.1.1', false],
  ['127.0.0.1', false],
  ['8.8.8.8', false],
  ['2001:db8::1', false],
];

test('private is RFC 1918 and RFC 4193, edges included, and nothing else', () => {
  const matches = networkMatcher(['private']);
  for (const [address, inside] of PRIVATE_EDGES) assert.equal(matches(address), inside, address);
});

test('loopback is 127.0.0.0/8 and ::1, and IPv4-mapped IPv6 is read as the IPv4 address it maps', () => {
  const matches = networkMatcher(['loopback']);
  for (const address of ['127.0.0.0', '127.0.0.1', '127.255.255.255', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) {
    assert.equal(matches(address), true, address);
  }
  for (const address of ['126.255.255.255', '128.0.0.0', '::2', '::', '0.0.0.0', '::ffff:10.0.0.1'])
    assert.equal(matches(address), false, address);
  const both = networkMatcher(['loopback', 'private']);
  assert.equal(both('::ffff:10.1.2.3'), true);
  assert.equal(both('::ffff:192.168.0.1'), true);
  assert.equal(both('::ffff:8.8.8.8'), false);
});

test('what is not an address is no caller of any network: malformed, empty, missing', () => {
  const matches = networkMatcher(['loopback', 'private', '0.0.0.0/1', '128.0.0.0/1', '::/1', '8000::/1']);
  for (const address of [
    undefined,
    '',
    'localhost',
    '1.2.3',
    '1.2.3.4.5',
    '999.1.1.1',
    '::ffff:999.1.1.1',
    '10.0.0.1 ',
    '[::1]',
    '::1/128',
    '10.0.0.1:80',
  ]) {
    assert.equal(matches(address), false, String(address));
  }
});

test('none admits nobody; entries in any letter case; a bad entry names itself', () => {
  assert.equal(networkMatcher(['none'])('127.0.0.1'), false);
  assert.equal(networkMatcher([])('127.0.0.1'), false);
  assert.equal(networkMatcher(['LOOPBACK', 'Private'])('10.0.0.1'), true);
  for (const bad of ['10.0.0.0/33', 'lan', '10.0.0', '2001:db8::/129', '*', '0.0.0.0/0', '10.0.0.0/8/8', '10.0.0.0/x'])
    assert.throws(
      () => networkMatcher(['loopback', bad]),
      (error: Error) => error instanceof TypeError && error.message.includes(`"${bad}"`),
    );
});

/** An IPv4 address or an IPv6 one in hex (full or compressed), as a socket or X-Forwarded-For gives it (a dotted tail only in mapped form, tested above). */
const anyAddress = fc.oneof(
  fc.ipV4(),
  fc.ipV6().filter((ip) => !ip.includes('.')),
);
const anyCidr = fc.oneof(
  fc.tuple(fc.ipV4(), fc.integer({ min: 1, max: 32 })).map(([ip, bits]) => ({ ip, bits, family: 'ipv4' as const })),
  // IPv6 written with a dotted tail (`::1.2.3.4`) is no way to write a subnet; proxy-addr reads it otherwise than BlockList.
  fc
    .tuple(
      fc.ipV6().filter((ip) => !ip.includes('.')),
      fc.integer({ min: 1, max: 128 }),
    )
    .map(([ip, bits]) => ({ ip, bits, family: 'ipv6' as const })),
);

test('any CIDR matches what node:net BlockList says it holds (random subnets and addresses)', () => {
  fc.assert(
    fc.property(
      fc.array(anyCidr, { minLength: 1, maxLength: 3 }),
      fc.array(anyAddress, { minLength: 1, maxLength: 20 }),
      (cidrs, addresses) => {
        // Within a family: BlockList also reads IPv4 callers against IPv6 subnets (as mapped addresses), which
        // proxy-addr deliberately does not.
        const oracles = { ipv4: new BlockList(), ipv6: new BlockList() };
        for (const { ip, bits, family } of cidrs) oracles[family].addSubnet(ip, bits, family);
        const matches = networkMatcher(cidrs.map(({ ip, bits }) => `${ip}/${bits}`));
        for (const address of addresses) {
          const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
          assert.equal(
            matches(address),
            oracles[family].check(address, family),
            `${address} in ${cidrs.map((c) => `${c.ip}/${c.bits}`).join(',')}`,
          );
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('TRUST_PROXY as Fastify reads it: names proxies only as a list of addresses; a hop count or true trusts whoever is nearest', () => {
  assert.equal(proxyTrust(false)('10.0.0.1', 0), false);
  assert.equal(proxyTrust(true)('8.8.8.8', 5), true);
  assert.equal(proxyTrust(1)('8.8.8.8', 0), true);
  assert.equal(proxyTrust(1)('8.8.8.8', 1), false);
  const list = proxyTrust('10.0.0.5, 192.168.1.0/24');
  assert.equal(list('10.0.0.5', 0), true);
  assert.equal(list('192.168.1.77', 3), true);
  assert.equal(list('10.0.0.6', 0), false);
  assert.deepEqual(
    [false, true, 2, '10.0.0.5'].map((value) => namesProxies(value)),
    [false, false, false, true],
  );
});

test('TRUST_PROXY that believes a peer it does not name is a risk said in words: true anywhere, a hop count off loopback', () => {
  const risk = (value: boolean | number | string, host: string) => trustProxyRisk(value, host) ?? '';
  assert.match(
    risk(true, '127.0.0.1'),
    /^TRUST_PROXY=true .*: any caller can choose its own address for the per-caller limit and the stream caps; set TRUST_PROXY to the proxy's address$/,
  );
  assert.match(risk(true, '0.0.0.0'), /any caller can choose its own address/);
  assert.match(risk(2, '0.0.0.0'), /^TRUST_PROXY=2 \(a hop count\) .*listening on 0\.0\.0\.0 .*any caller can choose its own address/);
  // A hop count on loopback: only this machine reaches the service, through the proxy that appends the caller.
  for (const host of ['127.0.0.1', '127.3.2.1', '::1', 'localhost', '::ffff:127.0.0.1']) {
    assert.equal(isLoopbackHost(host), true, host);
    assert.equal(trustProxyRisk(1, host), undefined, host);
  }
  for (const host of ['0.0.0.0', '::', '10.0.0.2', 'example.com', '128.0.0.1']) assert.equal(isLoopbackHost(host), false, host);
  for (const value of [false, 0, '10.0.0.5', '172.29.80.2,10.0.0.0/8'])
    assert.equal(trustProxyRisk(value, '0.0.0.0'), undefined, String(value));
});

test("the caller's address read before Fastify is Fastify's request.ip, under every kind of TRUST_PROXY", async () => {
  const peers = ['127.0.0.1', '10.0.0.7', '192.168.1.77', '8.8.8.8', '::1', '::ffff:10.0.0.5'];
  const hop = fc.oneof(fc.constantFrom(...peers), fc.ipV4(), fc.ipV6(), fc.constantFrom('unknown', '1.2.3', ''));
  for (const value of [false, true, 1, 2, '10.0.0.0/8, 127.0.0.1', '192.168.1.0/24,::1'] as const) {
    const trust = value === false ? undefined : proxyTrust(value);
    const app = Fastify({ trustProxy: trust ?? false });
    app.get('/', async (request) => request.ip);
    const read = callerAddress(trust);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...peers), fc.option(fc.array(hop, { maxLength: 4 })), async (peer, chain) => {
        const headers = chain === null ? {} : { 'x-forwarded-for': chain.join(', ') };
        const fastify = await app.inject({ url: '/', remoteAddress: peer, headers });
        // Read twice: a named list's remembered answers must not change it.
        for (let i = 0; i < 2; i += 1) {
          const before = read({ headers, socket: { remoteAddress: peer } } as unknown as IncomingMessage);
          assert.equal(before ?? '', fastify.body, `TRUST_PROXY=${value}, peer ${peer}, X-Forwarded-For ${headers['x-forwarded-for']}`);
        }
      }),
      { numRuns: 150 },
    );
    await app.close();
  }
});
