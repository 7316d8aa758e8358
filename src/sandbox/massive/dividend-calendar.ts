// A plausible, deterministic dividend calendar for the simulated Massive server: each payer pays on a
// fixed cadence (yearly to monthly) on a day derived from its ticker, raises its dividend once a year,
// and now and then declares a special one. Dates follow the US pattern: declared two to five weeks ahead,
// record date one business day after the ex-date, paid one to four weeks later. Only declared dividends
// are listed, so a few appear with ex-dates in the future, as on the real service. Records carry no `id`:
// no recorded answer has one (test/fixtures/recorded/massive/).
import { unit } from '../price-model.js';

export interface DividendPayer {
  ticker: string;
  /** Payments a year: 1, 2, 4 or 12. */
  frequency: 1 | 2 | 4 | 12;
  /** Regular dividend per share per year, today. */
  annualAmount: number;
  currency: string;
}

export interface SimDividend {
  cash_amount: number;
  currency: string;
  declaration_date: string;
  dividend_type: 'CD' | 'SC';
  ex_dividend_date: string;
  frequency: number;
  pay_date: string;
  record_date: string;
  ticker: string;
}

const DAY_MS = 86_400_000;
const HISTORY_YEARS = 3;

/** Every declared dividend of every payer from three years back, newest ex-dividend date first. */
export function dividendCalendar(payers: readonly DividendPayer[], now: number): SimDividend[] {
  const out: SimDividend[] = [];
  for (const payer of payers) out.push(...payerDividends(payer, now));
  return out.sort((a, b) => b.ex_dividend_date.localeCompare(a.ex_dividend_date) || a.ticker.localeCompare(b.ticker));
}

function payerDividends(payer: DividendPayer, now: number): SimDividend[] {
  const today = new Date(now);
  const thisYear = today.getUTCFullYear();
  const step = 12 / payer.frequency;
  const offset = Math.floor(unit(`div-month:${payer.ticker}`) * step);
  const day = 3 + Math.floor(unit(`div-day:${payer.ticker}`) * 22);
  const out: SimDividend[] = [];
  for (let year = thisYear - HISTORY_YEARS; year <= thisYear + 1; year += 1) {
    for (let month = offset; month < 12; month += step) {
      const exDate = businessDay(Date.UTC(year, month, day), 1);
      const record = dividendOn(payer, exDate, 'CD', thisYear);
      if (record !== undefined && Date.parse(record.declaration_date) <= now) out.push(record);
    }
    // About one payer in eight declares a special dividend in some years.
    if (unit(`special:${payer.ticker}:${year}`) < 0.12) {
      const exDate = businessDay(Date.UTC(year, Math.floor(unit(`special-month:${payer.ticker}:${year}`) * 12), 10 + (day % 15)), 1);
      const record = dividendOn(payer, exDate, 'SC', thisYear);
      if (record !== undefined && Date.parse(record.declaration_date) <= now) out.push(record);
    }
  }
  return out;
}

function dividendOn(payer: DividendPayer, exDate: number, type: 'CD' | 'SC', thisYear: number): SimDividend | undefined {
  const ex = isoDate(exDate);
  const seed = `${payer.ticker}:${ex}:${type}`;
  const declaration = exDate - (14 + Math.floor(unit(`decl:${seed}`) * 21)) * DAY_MS;
  const recordDate = businessDay(exDate + DAY_MS, 1);
  const payDate = businessDay(recordDate + (7 + Math.floor(unit(`pay:${seed}`) * 21)) * DAY_MS, 1);
  // Raised about 5 % a year (a little more or less per payer), so older payments are smaller.
  const growth = 1.02 + unit(`growth:${payer.ticker}`) * 0.06;
  const yearsBack = thisYear - new Date(exDate).getUTCFullYear();
  const regular = payer.annualAmount / payer.frequency / growth ** yearsBack;
  const amount = type === 'SC' ? regular * (1 + unit(`special-size:${seed}`) * 4) : regular;
  if (amount <= 0) return undefined;
  return {
    cash_amount: Math.round(amount * 10_000) / 10_000,
    currency: payer.currency,
    declaration_date: isoDate(declaration),
    dividend_type: type,
    ex_dividend_date: ex,
    frequency: type === 'SC' ? 0 : payer.frequency,
    pay_date: isoDate(payDate),
    record_date: isoDate(recordDate),
    ticker: payer.ticker,
  };
}

/** The first weekday on or after `time` (direction 1) or on or before it (-1). */
function businessDay(time: number, direction: 1 | -1): number {
  let t = time;
  while ([0, 6].includes(new Date(t).getUTCDay())) t += direction * DAY_MS;
  return t;
}

function isoDate(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}
