import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/core/errors.js';
import { parseIserverAccounts, parsePortfolioAccounts } from '../../../src/upstreams/ibkr/parse-accounts.js';
import { parseAuthStatus, parseTickle } from '../../../src/upstreams/ibkr/parse-session.js';
import { fixture } from '../../helpers/fixtures.js';
import { recording } from '../../helpers/recorded.js';

test('auth status: connected and logged-in-without-session', () => {
  assert.deepEqual(parseAuthStatus(fixture('ibkr', 'auth-status-connected.json')), {
    authenticated: true,
    established: true,
    connected: true,
    competing: false,
    message: '',
    loggedOut: false,
  });
  const none = parseAuthStatus(fixture('ibkr', 'auth-status-no-session.json'));
  assert.equal(none.authenticated, false);
  assert.equal(none.connected, true);
  assert.throws(() => parseAuthStatus({ error: 'x' }), ApiError);
  assert.throws(() => parseAuthStatus('<html>'), ApiError);
});

test('tickle: the session state inside, including a silently lost one and none at all', () => {
  assert.equal(parseTickle(fixture('ibkr', 'tickle.json'))?.authenticated, true);
  assert.equal(parseTickle(fixture('ibkr', 'tickle-session-lost.json'))?.authenticated, false);
  assert.equal(parseTickle(fixture('ibkr', 'tickle-no-iserver.json')), null);
  assert.throws(() => parseTickle([]), ApiError);
});

test('portfolio accounts: alias, title or id as name; rows without an id skipped', () => {
  assert.deepEqual(parsePortfolioAccounts(fixture('ibkr', 'portfolio-accounts.json')), [
    { accountId: 'U1234567', name: 'U1234567', type: 'INDIVIDUAL', currency: 'USD' },
    { accountId: 'U7654321', name: 'Retirement', type: 'IRA', currency: 'EUR' },
  ]);
  assert.throws(() => parsePortfolioAccounts({ error: 'x' }), ApiError);
});

test('brokerage accounts', () => {
  assert.deepEqual(parseIserverAccounts(fixture('ibkr', 'iserver-accounts.json')), {
    accounts: ['U1234567', 'U7654321'],
    selectedAccount: 'U1234567',
    isPaper: true,
  });
});

test('recorded auth status: no "established" key (2022 and 2023 captures) does not mean "no session"', () => {
  for (const name of ['auth-status-authenticated-2022', 'auth-status-authenticated-2023']) {
    const raw = recording('ibkr', name).json as Record<string, unknown>;
    assert.equal('established' in raw, false, `${name} is the capture without "established"`);
    const status = parseAuthStatus(raw);
    assert.equal(status.authenticated, raw.authenticated, name);
    assert.equal(status.established, true, `${name}: an authenticated session is an established one`);
  }
  const tickle = recording('ibkr', 'tickle-authenticated').json as { iserver: { authStatus: Record<string, unknown> } };
  assert.equal('established' in tickle.iserver.authStatus, false);
  assert.equal(parseTickle(tickle)?.established, true);
});

test('recorded status without a session: four keys, no message; not established since not connected', () => {
  const raw = recording('ibkr', 'auth-status-not-authenticated').json as Record<string, unknown>;
  assert.equal(Object.keys(raw).length, 4);
  assert.deepEqual(parseAuthStatus(raw), {
    authenticated: raw.authenticated,
    established: false,
    connected: raw.connected,
    competing: raw.competing,
    message: '',
    // This build sends no "established": nothing says nobody is logged in (the reporter was, from another host).
    loggedOut: false,
  });
  // Connected to IBKR's servers without authentication: a session to re-authenticate.
  assert.equal(parseAuthStatus({ ...raw, connected: true }).established, true);
  // "established": false is believed only where the gateway says it.
  assert.equal(parseAuthStatus({ ...raw, connected: true, established: false }).established, false);
});

test('recorded status after a logout (2026): authenticated, established and connected all false: nobody is logged in', () => {
  const raw = recording('ibkr', 'auth-status-logged-out-2026').json as Record<string, unknown>;
  assert.deepEqual(parseAuthStatus(raw), {
    authenticated: false,
    established: false,
    connected: false,
    competing: false,
    message: '',
    loggedOut: true,
  });
  // Still connected to IBKR's servers, the login stands: only the brokerage session is missing.
  assert.equal(parseAuthStatus({ ...raw, connected: true }).loggedOut, false);
});

test('an auth status or tickle answer that cannot be read is drift', () => {
  assert.throws(() => parseAuthStatus({ error: 'x' }), { name: 'UnreadableAnswerError', drift: 'auth-status' });
  assert.throws(() => parseTickle('<html>'), { name: 'UnreadableAnswerError', drift: 'tickle' });
  assert.throws(() => parsePortfolioAccounts({}), { name: 'UnreadableAnswerError', drift: 'accounts' });
  assert.throws(() => parseIserverAccounts([]), { name: 'UnreadableAnswerError', drift: 'brokerage-accounts' });
});
