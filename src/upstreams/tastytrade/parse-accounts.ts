// GET /customers/me/accounts -> data.items[] of {"account": {...}, "authority-level": "owner"}.
import type { BrokerAccount } from '../../broker/broker.js';
import { toText } from '../../broker/numbers.js';
import { parseItems } from './parse-envelope.js';

/** Tastytrade accounts are all held in US dollars. */
export const TASTYTRADE_CURRENCY = 'USD';

export function parseAccounts(json: unknown): BrokerAccount[] {
  const accounts: BrokerAccount[] = [];
  for (const item of parseItems(json, 'accounts')) {
    const account = (item.account ?? item) as Record<string, unknown>;
    if (account === null || typeof account !== 'object') continue;
    const accountId = toText(account['account-number']);
    if (accountId === null || account['is-closed'] === true) continue;
    const type = toText(account['account-type-name']);
    accounts.push({ accountId, name: toText(account.nickname) ?? type ?? accountId, type, currency: TASTYTRADE_CURRENCY });
  }
  return accounts;
}
