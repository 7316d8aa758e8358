// /portfolio/accounts (the accounts the session may read) and /iserver/accounts (the brokerage
// session's accounts, which must be read before market data snapshots).
import { UnreadableAnswerError } from '../../core/errors.js';
import type { BrokerAccount } from '../../broker/broker.js';
import { toText } from '../../broker/numbers.js';

export function parsePortfolioAccounts(json: unknown): BrokerAccount[] {
  if (!Array.isArray(json)) throw new UnreadableAnswerError('accounts', 'the IBKR gateway sent an account list that is not an array');
  const accounts: BrokerAccount[] = [];
  for (const item of json) {
    if (item === null || typeof item !== 'object') continue;
    const row = item as Record<string, unknown>;
    const accountId = toText(row.accountId) ?? toText(row.id);
    if (accountId === null) continue;
    accounts.push({
      accountId,
      name: toText(row.accountAlias) ?? toText(row.accountTitle) ?? toText(row.displayName) ?? toText(row.desc) ?? accountId,
      type: toText(row.type),
      currency: toText(row.currency),
    });
  }
  return accounts;
}

export interface IserverAccounts {
  accounts: string[];
  selectedAccount: string | null;
  isPaper: boolean | null;
}

export function parseIserverAccounts(json: unknown): IserverAccounts {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new UnreadableAnswerError('brokerage-accounts', 'the IBKR gateway sent a brokerage account list that is not an object');
  }
  const body = json as Record<string, unknown>;
  const accounts = Array.isArray(body.accounts) ? body.accounts.map(toText).filter((a): a is string => a !== null) : [];
  return { accounts, selectedAccount: toText(body.selectedAccount), isPaper: typeof body.isPaper === 'boolean' ? body.isPaper : null };
}
