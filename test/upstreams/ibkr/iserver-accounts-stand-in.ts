// No /iserver/accounts answer was ever recorded (SOURCES.md), yet the broker reads it before market data and
// health reads it once per session. Tests that replay recorded answers serve this stand-in for it: the keys
// the broker reads, nothing more, so no value a test checks comes from it.
import type { Loaded } from '../../helpers/recorded.js';

export const ISERVER_ACCOUNTS_STAND_IN = { accounts: ['DU1234567'], selectedAccount: 'DU1234567', isPaper: true };

/** The stand-in as a replayable recording, shaped after any recorded JSON answer. */
export function iserverAccountsStandIn(template: Loaded): Loaded {
  return {
    ...template,
    name: 'stand-in-iserver-accounts',
    request: { method: 'GET', path: '/iserver/accounts' },
    status: 200,
    text: JSON.stringify(ISERVER_ACCOUNTS_STAND_IN),
    json: ISERVER_ACCOUNTS_STAND_IN,
  };
}
