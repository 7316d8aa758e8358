// The recorder's scrubbing (scripts/record/scrub.ts): credentials, keys in URLs, OAuth tokens, IBKR
// account/session/user ids and MAC addresses, Tastytrade account numbers, names and emails; bytes not
// scrubbed are kept as they are. And the detector the corpus test uses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentialFindings, describeEdits, scrub } from '../../scripts/record/scrub.js';
import { SANDBOX_CREDENTIALS } from '../../src/sandbox/index.js';

const none = { credentials: [] };

test('a configured credential is replaced wherever it appears, plain or URL-encoded, and the edit says which', () => {
  const key = 'AbC123+/xyz=';
  const text = `{"note":"key ${key} here","url":"https://x/y?k=${encodeURIComponent(key)}"}`;
  const out = scrub(text, { provider: 'alpha-vantage', credentials: [{ label: 'the Alpha Vantage key', value: key }] });
  assert.equal(out.text, '{"note":"key REDACTED here","url":"https://x/y?k=REDACTED"}');
  assert.deepEqual(out.edits, ['the Alpha Vantage key -> REDACTED (2×)']);
});

test('bytes that are not scrubbed stay exactly as they were (spacing, order, odd line breaks)', () => {
  const text = '{\n\t"Global Quote" : {"01. symbol":"MSFT",   "05. price": "112.1300"}\r\n}';
  const out = scrub(text, { provider: 'alpha-vantage', ...none });
  assert.equal(out.text, text);
  assert.deepEqual(out.edits, []);
  assert.equal(describeEdits(out.edits), 'none');
});

test('apiKey/apikey values inside URLs in a body (Massive next_url) become REDACTED', () => {
  const text =
    '{"next_url":"https://api.massive.com/v3/reference/dividends?cursor=YXA9MjAy&apiKey=s3cr3tKey&limit=1","x":"https://a.b/q?apikey=abc"}';
  const out = scrub(text, { provider: 'massive', ...none });
  assert.equal(
    out.text,
    '{"next_url":"https://api.massive.com/v3/reference/dividends?cursor=YXA9MjAy&apiKey=REDACTED&limit=1","x":"https://a.b/q?apikey=REDACTED"}',
  );
  assert.equal(scrub(out.text, { provider: 'massive', ...none }).edits.length, 0, 'REDACTED is left alone');
});

test('OAuth access and refresh tokens are scrubbed, the rest of the token answer is kept', () => {
  const text = '{"access_token":"eyJhbGciOi.J9.abc","refresh_token":"rt-123","id_token":"x.y.z","expires_in":900,"token_type":"Bearer"}';
  const out = scrub(text, { provider: 'tastytrade', ...none });
  assert.equal(
    out.text,
    '{"access_token":"REDACTED","refresh_token":"REDACTED","id_token":"REDACTED","expires_in":900,"token_type":"Bearer"}',
  );
  assert.ok(out.edits.includes('"access_token" -> REDACTED'));
});

test('a bearer token in text is scrubbed', () => {
  const out = scrub('Authorization: Bearer abcdef0123456789', { provider: 'massive', ...none });
  assert.equal(out.text, 'Authorization: Bearer REDACTED');
});

test('IBKR account ids get U1234567/DU1234567 placeholders, one per id, consistent across bodies of a run', () => {
  const accounts =
    '[{"id":"U9876543","accountId":"U9876543","desc":"U9876543"},{"id":"DU5550001","accountId":"DU5550001"},{"id":"U1112223"}]';
  const first = scrub(accounts, { provider: 'ibkr', ...none });
  assert.equal(
    first.text,
    '[{"id":"U1234567","accountId":"U1234567","desc":"U1234567"},{"id":"DU1234567","accountId":"DU1234567"},{"id":"U1234568"}]',
  );
  const positions = scrub('[{"acctId":"DU5550001","conid":265598},{"acctId":"U1112223"}]', {
    provider: 'ibkr',
    credentials: [],
    aliases: first.aliases,
  });
  assert.equal(positions.text, '[{"acctId":"DU1234567","conid":265598},{"acctId":"U1234568"}]');
  assert.ok(positions.edits.some((e) => e.startsWith('IBKR account id')));
});

test("placeholders never collide: a real id equal to another id's placeholder still gets its own", () => {
  const out = scrub('["DU7654321","DU1234567"]', { provider: 'ibkr', ...none });
  assert.equal(out.text, '["DU1234567","DU1234568"]');
});

test('IBKR session ids, user ids, hardware ids and MAC addresses become placeholders', () => {
  const tickle =
    '{"session":"bb665d0f55b6289d70bc7380089fc96f","ssoExpires":460311,"userId":123456789,"iserver":{"authStatus":{"MAC":"06:05:9B:DE:2D:8B","hardware_info":"4a1b2c3d|06:05:9B:DE:2D:8B"}},"sessionId":"a1b2c3d4"}';
  const out = scrub(tickle, { provider: 'ibkr', ...none });
  assert.equal(
    out.text,
    '{"session":"0123456789abcdef0123456789abcdef","ssoExpires":460311,"userId":12345678,"iserver":{"authStatus":{"MAC":"00:00:00:00:00:00","hardware_info":"00000000|00:00:00:00:00:00"}},"sessionId":"01234567"}',
  );
  // Scrubbing a scrubbed body changes nothing.
  assert.deepEqual(scrub(out.text, { provider: 'ibkr', ...none }).edits, []);
});

test('names, aliases and emails in IBKR account bodies are scrubbed; an id shown as a name keeps its placeholder', () => {
  const text =
    '[{"id":"U9876543","accountTitle":"Jane Q Public","displayName":"U9876543","accountAlias":"Jane\'s IRA","email":"jane@example.org"}]';
  const out = scrub(text, { provider: 'ibkr', ...none });
  assert.equal(
    out.text,
    '[{"id":"U1234567","accountTitle":"REDACTED","displayName":"U1234567","accountAlias":"REDACTED","email":"REDACTED"}]',
  );
  const accounts = scrub('{"accounts":["U9876543"],"aliases":{"U9876543":"Jane Public"},"note":"mail jane@example.org"}', {
    provider: 'ibkr',
    ...none,
  });
  assert.equal(accounts.text, '{"accounts":["U1234567"],"aliases":{"U1234567":"REDACTED"},"note":"mail user@example.com"}');
  assert.equal(
    scrub('{"accountTitle":"","accountAlias":null}', { provider: 'ibkr', ...none }).text,
    '{"accountTitle":"","accountAlias":null}',
  );
});

test('Tastytrade account numbers become 5WT00001, 5WT00002 in the order seen, in bodies, paths and ids that embed them', () => {
  const accounts =
    '{"data":{"items":[{"account":{"account-number":"5YZ12345","external-id":"A5YZ12345","nickname":"Jane Trading"}},{"account":{"account-number":"6AB99999"}}]},"context":"/customers/me/accounts"}';
  const out = scrub(accounts, { provider: 'tastytrade', ...none });
  assert.equal(
    out.text,
    '{"data":{"items":[{"account":{"account-number":"5WT00001","external-id":"REDACTED","nickname":"REDACTED"}},{"account":{"account-number":"5WT00002"}}]},"context":"/customers/me/accounts"}',
  );
  const path = scrub('/accounts/6AB99999/positions', { provider: 'tastytrade', credentials: [], aliases: out.aliases });
  assert.equal(path.text, '/accounts/5WT00002/positions');
  assert.ok(out.edits.some((e) => e.startsWith('account number -> 5WT00001 style')));
});

test('market-data bodies keep their symbols, numbers and names of things (only account bodies lose names)', () => {
  const yahoo = '{"chart":{"result":[{"meta":{"symbol":"^GSPC","shortName":"S&P 500","longName":"S&P 500 Index"}}]}}';
  assert.equal(scrub(yahoo, { provider: 'yahoo', ...none }).text, yahoo);
  const positions = scrub('[{"acctId":"U9876543","contractDesc":"SPY","fullName":"SPY 20JAN25 450 C","name":"SPDR S&P 500 ETF TRUST"}]', {
    provider: 'ibkr',
    ...none,
  });
  assert.equal(
    positions.text,
    '[{"acctId":"U1234567","contractDesc":"SPY","fullName":"SPY 20JAN25 450 C","name":"SPDR S&P 500 ETF TRUST"}]',
    'contract names are not people',
  );
  const av = '{"Information":"Write to support@alphavantage.co"}';
  assert.equal(scrub(av, { provider: 'alpha-vantage', ...none }).text, av, 'emails are scrubbed from account bodies only');
});

test('credentialFindings: sandbox credentials, apikey values, bearer tokens and long secrets in key-named fields', () => {
  assert.deepEqual(credentialFindings('{"ok":true}', Object.values(SANDBOX_CREDENTIALS)), []);
  assert.equal(credentialFindings(`x ${SANDBOX_CREDENTIALS.massiveKey} y`, Object.values(SANDBOX_CREDENTIALS)).length, 1);
  assert.equal(credentialFindings('https://x/q?function=A&apikey=zx81-spectrum-48k').length, 1);
  assert.equal(credentialFindings('https://x/q?apiKey=REDACTED').length, 0);
  assert.equal(
    credentialFindings('the demo URL (apikey=demo); file name contains apikey=test;').length,
    0,
    "Alpha Vantage's public demo/test keys",
  );
  assert.equal(credentialFindings('Authorization: Bearer 0a1b2c3d4e5f6a7b').length, 1);
  assert.equal(credentialFindings('{"token_type":"Bearer"}').length, 0);
  assert.equal(credentialFindings('{"session":"bb665d0f55b6289d70bc7380089fc96f"}').length, 1);
  assert.equal(credentialFindings('{"session-token":"Xk9d_3lM2pQrS8vT0wYz1aBc"}').length, 1);
  assert.equal(credentialFindings('{"session":"0123456789abcdef0123456789abcdef","access_token":"REDACTED"}').length, 0, 'placeholders');
  assert.equal(credentialFindings('{"request_id":"0326f1f88a2867a7184c116f5b1edd00"}').length, 0, 'not a key-named field');
});
