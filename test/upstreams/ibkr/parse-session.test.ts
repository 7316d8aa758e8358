import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/errors.js';
import { parseIserverAccounts, parsePortfolioAccounts } from '../../../src/upstreams/ibkr/parse-accounts.js';
import { parseAuthStatus, parseTickle } from '../../../src/upstreams/ibkr/parse-session.js';
import { fixture } from '../../helpers/fixtures.js';

test('auth status: connected and logged-in-without-session', () => {
  assert.deepEqual(parseAuthStatus(fixture('ibkr', 'auth-status-connected.json')), { authenticated: true, established: true, connected: true, competing: false, message: '' });
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
  assert.deepEqual(parseIserverAccounts(fixture('ibkr', 'iserver-accounts.json')), { accounts: ['U1234567', 'U7654321'], selectedAccount: 'U1234567', isPaper: true });
});
