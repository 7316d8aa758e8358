import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { ClientKeys, parseClientKeys } from '../../src/core/client-keys.js';
import { type ConfigError, loadConfig } from '../../src/core/config.js';

const sha = (key: string) => createHash('sha256').update(key).digest('hex');
const AGENTS = 'agents-key-0123456789abcdef';
const LAPTOP = 'laptop-key-0123456789abcdef';
const LINES = `# who may call with a key
agents sha256=${sha(AGENTS)} share=2 scopes=market,mcp rate=120
laptop sha256=${sha(LAPTOP).toUpperCase()} scopes=market,broker`;

test('CLIENT_KEYS: a name, the hash of the key, and optional share, scopes and rate; one a line or separated by ;', () => {
  const [agents, laptop] = parseClientKeys(LINES);
  assert.deepEqual(agents, { name: 'agents', sha256: sha(AGENTS), share: 2, scopes: new Set(['market', 'mcp']), ratePerMinute: 120 });
  assert.deepEqual(laptop, {
    name: 'laptop',
    sha256: sha(LAPTOP),
    share: 1,
    scopes: new Set(['market', 'broker']),
    ratePerMinute: undefined,
  });
  assert.equal(parseClientKeys(`a sha256=${sha('x')}; b sha256=${sha('y')}`).length, 2);
  assert.deepEqual(parseClientKeys(`a sha256=${sha('x')}`)[0]?.scopes, new Set(['market']), 'market by default');
});

test('a wrong entry is named by position and name, never by its hash', () => {
  const hash = sha('secret');
  for (const [text, problem] of [
    [`a sha256=${hash} scopes=market,admin`, /entry 1 \(a\): scope "admin"/],
    [`a sha256=abc`, /entry 1 \(a\): sha256= must be/],
    [`a sha256=${hash}\na sha256=${sha('other')}`, /entry 2 \(a\): the name is used twice/],
    [`a sha256=${hash}\nb sha256=${hash}`, /entry 2 \(b\): the same key is listed twice/],
    [`a sha256=${hash} share=0`, /share= must be/],
    [`b@d sha256=${hash}`, /entry 1: a name/],
    [`a sha256=${hash} colour=red`, /"colour" is not one of/],
  ] as const) {
    assert.throws(
      () => parseClientKeys(text),
      (error: Error) => problem.test(error.message) && !error.message.includes(hash),
      text,
    );
  }
  assert.throws(
    () => loadConfig({ CLIENT_KEYS: `a sha256=${hash} scopes=admin` }),
    (error: ConfigError) => error.problems.some((p) => p.startsWith('CLIENT_KEYS: entry 1 (a)')) && !error.message.includes(hash),
  );
  assert.throws(() => loadConfig({ CLIENT_KEYS_FILE: '/nonexistent/keys' }), /CLIENT_KEYS_FILE cannot be read/);
});

test('a bearer token is a client, a wrong one is refused, and the other bearer tokens are no wrong key', () => {
  const keys = new ClientKeys(parseClientKeys(LINES), ['broker-token-0123456789']);
  const agents = keys.verdict(`Bearer ${AGENTS}`);
  assert.ok(agents.kind === 'key');
  assert.deepEqual([agents.caller.account, agents.caller.weight, agents.caller.label], ['key:agents', 2, 'agents']);
  assert.equal(keys.verdict(`bearer ${LAPTOP}`).kind, 'key', 'the scheme in any case');
  assert.equal(keys.verdict('Bearer not-a-key').kind, 'invalid');
  assert.equal(keys.verdict('Bearer broker-token-0123456789').kind, 'none', 'BROKER_TOKEN opens its own routes');
  assert.equal(keys.verdict('Basic dXNlcjpwdw==').kind, 'none');
  assert.equal(keys.verdict(undefined).kind, 'none');
  assert.equal(new ClientKeys([]).verdict('Bearer anything').kind, 'none', 'without CLIENT_KEYS a bearer token means nothing here');
});
