// Company fundamentals for the universe's stocks (ETF_PROFILE for its ETFs): the fields and their order as
// recorded (OVERVIEW, INCOME_STATEMENT and EARNINGS of TSLA, 2021), every value a string, "None" where a
// company has nothing to report (a non-payer's dividend dates; an early quarter's estimate). Figures are
// derived from the symbol and its price model: consistent across calls, not reference data. A symbol Alpha
// Vantage has no fundamentals for answers `{}`, as it does.
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { DAY_MS } from '../../core/us-market-time.js';
import { priceAt, unit } from '../price-model.js';
import { findInstrument, type Instrument } from '../universe.js';
import { formatDecimal } from './format.js';

type Row = Record<string, string>;

const money = (symbol: string, what: string, scale: number) => Math.round((0.3 + unit(`${what}:${symbol}`)) * scale);
const ratio = (symbol: string, what: string, lo: number, hi: number, decimals = 4) =>
  formatDecimal(lo + unit(`${what}:${symbol}`) * (hi - lo), decimals);

/** Fiscal quarter ends (newest first) reported by `nowMs`: a quarter is reported a month after it ends. */
function quarterEnds(nowMs: number, count: number): string[] {
  const reported = new Date(nowMs - 30 * DAY_MS);
  let index = reported.getUTCFullYear() * 4 + Math.floor(reported.getUTCMonth() / 3) - 1;
  return Array.from({ length: count }, () => {
    const year = Math.floor(index / 4);
    const q = index % 4;
    index -= 1;
    return new Date(Date.UTC(year, q * 3 + 3, 0)).toISOString().slice(0, 10);
  });
}

function overview(instrument: Instrument, nowMs: number): Row {
  const s = instrument.symbol;
  const price = priceAt(s, nowMs);
  const shares = money(s, 'shares', 2_000_000_000);
  const eps = (price / (12 + unit(`pe:${s}`) * 30)).toFixed(2);
  const pays = instrument.dividend.frequency > 0;
  const [latest] = quarterEnds(nowMs, 1);
  return {
    Symbol: s,
    AssetType: 'Common Stock',
    Name: instrument.name,
    Description: `${instrument.name} (simulated profile: figures are derived from the symbol, not reported).`,
    CIK: String(1_000_000 + (money(s, 'cik', 800_000) % 900_000)),
    Exchange: instrument.exchange,
    Currency: 'USD',
    Country: 'USA',
    Sector: 'Technology',
    Industry: 'Information Technology Services',
    Address: 'ONE SIMULATED WAY, NEW YORK, NY, US',
    FullTimeEmployees: String(money(s, 'staff', 120_000)),
    FiscalYearEnd: 'December',
    LatestQuarter: latest as string,
    MarketCapitalization: String(Math.round(price * shares)),
    EBITDA: String(money(s, 'ebitda', 20_000_000_000)),
    PERatio: formatDecimal(price / Number(eps), 4),
    PEGRatio: ratio(s, 'peg', 0.5, 5),
    BookValue: ratio(s, 'book', 5, 60, 3),
    DividendPerShare: pays ? formatDecimal(price * instrument.dividend.yield, 2) : 'None',
    // Recorded (TSLA, 2021): a non-payer's yields and rates are "0", its per-share dividend and dates "None".
    DividendYield: pays ? formatDecimal(instrument.dividend.yield, 4) : '0',
    EPS: eps,
    RevenuePerShareTTM: ratio(s, 'rps', 5, 120, 3),
    ProfitMargin: ratio(s, 'margin', 0.02, 0.35),
    OperatingMarginTTM: ratio(s, 'opmargin', 0.03, 0.4),
    ReturnOnAssetsTTM: ratio(s, 'roa', 0.01, 0.2),
    ReturnOnEquityTTM: ratio(s, 'roe', 0.03, 0.6),
    RevenueTTM: String(money(s, 'revenue', 80_000_000_000)),
    GrossProfitTTM: String(money(s, 'gross', 40_000_000_000)),
    DilutedEPSTTM: eps,
    QuarterlyEarningsGrowthYOY: ratio(s, 'qeg', -0.2, 0.6, 3),
    QuarterlyRevenueGrowthYOY: ratio(s, 'qrg', -0.1, 0.4, 3),
    AnalystTargetPrice: formatDecimal(price * (1 + unit(`target:${s}`) * 0.3), 2),
    TrailingPE: formatDecimal(price / Number(eps), 4),
    ForwardPE: ratio(s, 'fpe', 8, 45),
    PriceToSalesRatioTTM: ratio(s, 'ps', 0.5, 15),
    PriceToBookRatio: ratio(s, 'pb', 0.8, 30),
    EVToRevenue: ratio(s, 'evr', 0.8, 15, 3),
    EVToEBITDA: ratio(s, 'eve', 4, 40),
    Beta: ratio(s, 'beta', 0.5, 2),
    '52WeekHigh': formatDecimal(price * 1.25, 2),
    '52WeekLow': formatDecimal(price * 0.7, 2),
    '50DayMovingAverage': formatDecimal(priceAt(s, nowMs - 25 * DAY_MS), 4),
    '200DayMovingAverage': formatDecimal(priceAt(s, nowMs - 100 * DAY_MS), 4),
    SharesOutstanding: String(shares),
    SharesFloat: String(Math.round(shares * 0.92)),
    SharesShort: String(Math.round(shares * 0.02)),
    SharesShortPriorMonth: String(Math.round(shares * 0.021)),
    ShortRatio: ratio(s, 'short', 0.5, 8, 2),
    ShortPercentOutstanding: '0.02',
    ShortPercentFloat: '0.0217',
    PercentInsiders: ratio(s, 'insiders', 0.05, 20, 3),
    PercentInstitutions: ratio(s, 'institutions', 30, 85, 3),
    ForwardAnnualDividendRate: pays ? formatDecimal(price * instrument.dividend.yield, 2) : '0',
    ForwardAnnualDividendYield: pays ? formatDecimal(instrument.dividend.yield, 4) : '0',
    PayoutRatio: pays ? ratio(s, 'payout', 0.1, 0.8) : '0',
    DividendDate: pays ? (quarterEnds(nowMs, 1)[0] as string) : 'None',
    ExDividendDate: pays ? (quarterEnds(nowMs, 1)[0] as string) : 'None',
    LastSplitFactor: '2:1',
    LastSplitDate: '2020-08-31',
  };
}

const INCOME = [
  'grossProfit',
  'totalRevenue',
  'costOfRevenue',
  'costofGoodsAndServicesSold',
  'operatingIncome',
  'sellingGeneralAndAdministrative',
  'researchAndDevelopment',
  'operatingExpenses',
  'investmentIncomeNet',
  'netInterestIncome',
  'interestIncome',
  'interestExpense',
  'nonInterestIncome',
  'otherNonOperatingIncome',
  'depreciation',
  'depreciationAndAmortization',
  'incomeBeforeTax',
  'incomeTaxExpense',
  'interestAndDebtExpense',
  'netIncomeFromContinuingOperations',
  'comprehensiveIncomeNetOfTax',
  'ebit',
  'ebitda',
  'netIncome',
];
const BALANCE = [
  'totalAssets',
  'totalCurrentAssets',
  'cashAndCashEquivalentsAtCarryingValue',
  'cashAndShortTermInvestments',
  'inventory',
  'currentNetReceivables',
  'totalNonCurrentAssets',
  'propertyPlantEquipment',
  'accumulatedDepreciationAmortizationPPE',
  'intangibleAssets',
  'intangibleAssetsExcludingGoodwill',
  'goodwill',
  'investments',
  'longTermInvestments',
  'shortTermInvestments',
  'otherCurrentAssets',
  'otherNonCurrentAssets',
  'totalLiabilities',
  'totalCurrentLiabilities',
  'currentAccountsPayable',
  'deferredRevenue',
  'currentDebt',
  'shortTermDebt',
  'totalNonCurrentLiabilities',
  'capitalLeaseObligations',
  'longTermDebt',
  'currentLongTermDebt',
  'longTermDebtNoncurrent',
  'shortLongTermDebtTotal',
  'otherCurrentLiabilities',
  'otherNonCurrentLiabilities',
  'totalShareholderEquity',
  'treasuryStock',
  'retainedEarnings',
  'commonStock',
  'commonStockSharesOutstanding',
];
const CASH_FLOW = [
  'operatingCashflow',
  'paymentsForOperatingActivities',
  'proceedsFromOperatingActivities',
  'changeInOperatingLiabilities',
  'changeInOperatingAssets',
  'depreciationDepletionAndAmortization',
  'capitalExpenditures',
  'changeInReceivables',
  'changeInInventory',
  'profitLoss',
  'cashflowFromInvestment',
  'cashflowFromFinancing',
  'proceedsFromRepaymentsOfShortTermDebt',
  'paymentsForRepurchaseOfCommonStock',
  'paymentsForRepurchaseOfEquity',
  'paymentsForRepurchaseOfPreferredStock',
  'dividendPayout',
  'dividendPayoutCommonStock',
  'dividendPayoutPreferredStock',
  'proceedsFromIssuanceOfCommonStock',
  'proceedsFromIssuanceOfLongTermDebtAndCapitalSecuritiesNet',
  'proceedsFromIssuanceOfPreferredStock',
  'proceedsFromRepurchaseOfEquity',
  'proceedsFromSaleOfTreasuryStock',
  'changeInCashAndCashEquivalents',
  'changeInExchangeRate',
  'netIncome',
];
const STATEMENTS: Record<string, readonly string[]> = { INCOME_STATEMENT: INCOME, BALANCE_SHEET: BALANCE, CASH_FLOW: CASH_FLOW };

function statement(fn: string, symbol: string, nowMs: number): unknown {
  const fields = STATEMENTS[fn] as readonly string[];
  const report = (date: string, scale: number): Row => ({
    fiscalDateEnding: date,
    reportedCurrency: 'USD',
    ...Object.fromEntries(fields.map((f) => [f, String(money(symbol, `${f}:${date}`, scale))])),
  });
  const quarters = quarterEnds(nowMs, 20);
  const years = quarters.filter((d) => d.endsWith('12-31')).slice(0, 5);
  return {
    symbol,
    annualReports: years.map((d) => report(d, 4_000_000_000)),
    quarterlyReports: quarters.map((d) => report(d, 1_000_000_000)),
  };
}

function earnings(symbol: string, nowMs: number): unknown {
  const quarters = quarterEnds(nowMs, 24);
  const eps = (d: string) => formatDecimal(unit(`eps:${symbol}:${d}`) * 4 - 0.5, 4);
  const quarterly = quarters.map((d, i) => {
    const reported = Number(eps(d));
    // Recorded: the oldest quarters have no estimate, written "None".
    const estimate = i === quarters.length - 1 ? undefined : reported * (0.9 + unit(`est:${symbol}:${d}`) * 0.2);
    return {
      fiscalDateEnding: d,
      reportedDate: new Date(Date.parse(d) + 27 * DAY_MS).toISOString().slice(0, 10),
      reportedEPS: eps(d),
      estimatedEPS: estimate === undefined ? 'None' : formatDecimal(estimate, 4),
      surprise: estimate === undefined ? 'None' : formatDecimal(reported - estimate, 4),
      surprisePercentage:
        estimate === undefined || estimate === 0 ? 'None' : formatDecimal((100 * (reported - estimate)) / Math.abs(estimate), 4),
    };
  });
  const annual = quarters.filter((d) => d.endsWith('12-31')).map((d) => ({ fiscalDateEnding: d, reportedEPS: eps(`year:${d}`) }));
  return { symbol, annualEarnings: annual, quarterlyEarnings: quarterly };
}

/** DIVIDENDS and SPLITS: `{ symbol, data: [...] }`, newest first. */
function corporateActions(fn: string, instrument: Instrument, nowMs: number): unknown {
  if (fn === 'SPLITS') return { symbol: instrument.symbol, data: [{ effective_date: '2020-08-31', split_factor: '2.0000' }] };
  const { frequency, yield: yieldRate } = instrument.dividend;
  const dates = frequency === 0 ? [] : quarterEnds(nowMs, 8).slice(0, Math.max(1, frequency * 2));
  const amount = formatDecimal((priceAt(instrument.symbol, nowMs) * yieldRate) / Math.max(1, frequency), 4);
  const day = (d: string, shift: number) => new Date(Date.parse(d) + shift * DAY_MS).toISOString().slice(0, 10);
  return {
    symbol: instrument.symbol,
    data: dates.map((d) => ({
      ex_dividend_date: d,
      declaration_date: day(d, -30),
      record_date: day(d, 1),
      payment_date: day(d, 10),
      amount,
    })),
  };
}

function etfProfile(instrument: Instrument, nowMs: number): unknown {
  const s = instrument.symbol;
  return {
    net_assets: String(money(s, 'assets', 100_000_000_000)),
    net_expense_ratio: ratio(s, 'expense', 0.0003, 0.009),
    portfolio_turnover: ratio(s, 'turnover', 0.02, 0.4, 2),
    dividend_yield: formatDecimal(instrument.dividend.yield, 4),
    inception_date: '1999-03-10',
    leveraged: 'NO',
    sectors: [
      { sector: 'INFORMATION TECHNOLOGY', weight: '0.512' },
      { sector: 'COMMUNICATION SERVICES', weight: '0.158' },
    ],
    holdings: ['AAPL', 'MSFT', 'NVDA'].map((h) => ({
      symbol: h,
      description: findInstrument(h)?.name.toUpperCase() ?? h,
      weight: formatDecimal(0.05 + unit(`w:${s}:${h}:${Math.floor(nowMs / DAY_MS)}`) * 0.04, 4),
    })),
  };
}

export const FUNDAMENTAL_FUNCTIONS = [
  'OVERVIEW',
  'INCOME_STATEMENT',
  'BALANCE_SHEET',
  'CASH_FLOW',
  'EARNINGS',
  'DIVIDENDS',
  'SPLITS',
  'ETF_PROFILE',
  'SHARES_OUTSTANDING',
  'EARNINGS_ESTIMATES',
  'INSIDER_TRANSACTIONS',
  'EARNINGS_CALL_TRANSCRIPT',
] as const;

/** Any of FUNDAMENTAL_FUNCTIONS for `query`'s symbol. */
export function fundamentals(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const symbol = query.get('symbol') ?? '';
  if (symbol.trim() === '') return invalidApiCall(fn);
  const instrument = findInstrument(symbol);
  // Recorded behaviour of the real API: a symbol without fundamentals (an ETF's OVERVIEW, an unknown one) is `{}`.
  if (instrument === undefined || (fn === 'ETF_PROFILE') !== (instrument.kind === 'etf')) return {};
  const s = instrument.symbol;
  switch (fn) {
    case 'OVERVIEW':
      return overview(instrument, nowMs);
    case 'EARNINGS':
      return earnings(s, nowMs);
    case 'DIVIDENDS':
    case 'SPLITS':
      return corporateActions(fn, instrument, nowMs);
    case 'ETF_PROFILE':
      return etfProfile(instrument, nowMs);
    case 'SHARES_OUTSTANDING':
      return {
        symbol: s,
        status: 'success',
        data: quarterEnds(nowMs, 8).map((date) => ({
          date,
          shares_outstanding_diluted: String(money(s, 'shares', 2_000_000_000)),
          shares_outstanding_basic: String(money(s, 'basic', 1_900_000_000)),
        })),
      };
    case 'EARNINGS_ESTIMATES':
      return {
        symbol: s,
        estimates: quarterEnds(nowMs - 120 * DAY_MS, 4).map((date) => ({
          date,
          horizon: 'next fiscal quarter',
          eps_estimate_average: ratio(s, `eea:${date}`, 0.2, 4),
          eps_estimate_analyst_count: String(5 + (money(s, `n:${date}`, 20) % 20)),
        })),
      };
    case 'INSIDER_TRANSACTIONS':
      return {
        data: quarterEnds(nowMs, 3).map((date) => ({
          transaction_date: date,
          ticker: s,
          executive: 'SIMULATED, OFFICER',
          executive_title: 'Chief Financial Officer',
          security_type: 'Common Stock',
          acquisition_or_disposal: 'D',
          shares: String(money(s, `sh:${date}`, 20_000)),
          share_price: formatDecimal(priceAt(s, Date.parse(date)), 2),
        })),
      };
    case 'EARNINGS_CALL_TRANSCRIPT': {
      const quarter = query.get('quarter') ?? '';
      if (!/^\d{4}Q[1-4]$/.test(quarter)) return invalidApiCall(fn);
      return {
        symbol: s,
        quarter,
        transcript: [
          { speaker: 'Operator', title: 'Operator', content: 'Good day, and welcome to the simulated earnings call.', sentiment: '0.5' },
        ],
      };
    }
    default:
      return statement(fn, s, nowMs);
  }
}
