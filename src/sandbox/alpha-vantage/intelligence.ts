// Market-wide answers: NEWS_SENTIMENT (layout recorded in 2022: string relevance scores, a number for the
// overall sentiment score, `time_published` as 20220914T141049), TOP_GAINERS_LOSERS (recorded 2023:
// prices and changes without fixed decimals, percentages with "%"), MARKET_STATUS (the recorded list of
// venues, each open or closed at the simulated moment by its local hours) and the analytics functions.
import { invalidApiCall } from '../../wire/alpha-vantage/notices.js';
import { DAY_MS, HOUR_MS } from '../../core/us-market-time.js';
import { previousClose, priceAt, unit } from '../price-model.js';
import { findInstrument, UNIVERSE } from '../universe.js';
import { formatDecimal } from './format.js';
import { plain } from './market-data.js';

const LABELS: Array<[number, string]> = [
  [-0.35, 'Bearish'],
  [-0.15, 'Somewhat-Bearish'],
  [0.15, 'Neutral'],
  [0.35, 'Somewhat-Bullish'],
];
const label = (score: number) => LABELS.find(([edge]) => score <= edge)?.[1] ?? 'Bullish';
const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace(/[-:]/g, '');

const TOPICS = ['Technology', 'Earnings', 'Financial Markets', 'Economy - Monetary', 'Retail & Wholesale'];

export function newsSentiment(query: URLSearchParams, nowMs: number): unknown {
  const tickers = (query.get('tickers') ?? '').split(',').filter((t) => t !== '');
  const unknown = tickers.find((t) => !/^(CRYPTO:|FOREX:)?[A-Z0-9.]+$/i.test(t));
  const limit = Number(query.get('limit') ?? 50);
  if (unknown !== undefined || !(limit >= 1 && limit <= 1000)) return invalidApiCall('NEWS_SENTIMENT');
  const subjects = tickers.length > 0 ? tickers.map((t) => t.toUpperCase()) : UNIVERSE.slice(0, 8).map((i) => i.symbol);
  const feed = Array.from({ length: Math.min(limit, 20) }, (_, i) => {
    const at = Math.floor(nowMs / HOUR_MS) * HOUR_MS - i * 3 * HOUR_MS;
    const ticker = subjects[i % subjects.length] as string;
    const score = Number((unit(`news:${ticker}:${at}`) - 0.4).toFixed(6));
    const name = findInstrument(ticker.replace(/^\w+:/, ''))?.name ?? ticker;
    return {
      title: `${name} ${score > 0 ? 'gains' : 'slips'} as traders weigh the session (simulated)`,
      url: `https://news.example/sandbox/${ticker.toLowerCase().replace(':', '-')}/${stamp(at)}`,
      time_published: stamp(at),
      authors: ['Sandbox Newsroom'],
      summary: `A simulated article about ${name}, so that a dashboard has news to show without a key.`,
      banner_image: `https://news.example/sandbox/${ticker.toLowerCase().replace(':', '-')}.png`,
      source: 'Sandbox Wire',
      category_within_source: 'n/a',
      source_domain: 'news.example',
      topics: [{ topic: TOPICS[i % TOPICS.length] as string, relevance_score: formatDecimal(0.25 + unit(`rel:${at}`) * 0.75, 6) }],
      overall_sentiment_score: score,
      overall_sentiment_label: label(score),
      ticker_sentiment: [
        {
          ticker,
          relevance_score: formatDecimal(0.5 + unit(`tr:${at}`) * 0.5, 6),
          ticker_sentiment_score: formatDecimal(score, 6),
          ticker_sentiment_label: label(score),
        },
      ],
    };
  });
  return {
    items: String(feed.length),
    sentiment_score_definition:
      'x <= -0.35: Bearish; -0.35 < x <= -0.15: Somewhat-Bearish; -0.15 < x < 0.15: Neutral; 0.15 <= x < 0.35: Somewhat_Bullish; x >= 0.35: Bullish',
    relevance_score_definition: '0 < x <= 1, with a higher score indicating higher relevance.',
    feed,
  };
}

export function topGainersLosers(nowMs: number): unknown {
  const moves = UNIVERSE.map((i) => {
    const price = priceAt(i.symbol, nowMs);
    const change = price - previousClose(i.symbol, nowMs);
    return {
      i,
      price,
      change,
      percent: (100 * change) / (price - change),
      volume: Math.round(unit(`v:${i.symbol}:${Math.floor(nowMs / DAY_MS)}`) * 9e7),
    };
  });
  // Recorded: prices and changes with as few decimals as they need (at least one), percentages with "%".
  const row = (m: (typeof moves)[number]) => ({
    ticker: m.i.symbol,
    price: plain(m.price),
    change_amount: plain(m.change),
    change_percentage: `${plain(m.percent)}%`,
    volume: String(m.volume),
  });
  const by = (order: (a: (typeof moves)[number], b: (typeof moves)[number]) => number) => [...moves].sort(order).slice(0, 20).map(row);
  const eastern = new Date(nowMs - 4 * HOUR_MS).toISOString().slice(0, 19).replace('T', ' ');
  return {
    metadata: 'Top gainers, losers, and most actively traded US tickers',
    last_updated: `${eastern} US/Eastern`,
    top_gainers: by((a, b) => b.percent - a.percent),
    top_losers: by((a, b) => a.percent - b.percent),
    most_actively_traded: by((a, b) => b.volume - a.volume),
  };
}

/** The venues as recorded (2023): region, exchanges, zone, local hours, and the recorded notes. */
const VENUES: Array<[string, string, string, string, string, string, string]> = [
  ['Equity', 'United States', 'NASDAQ, NYSE, AMEX, BATS', 'America/New_York', '09:30', '16:15', ''],
  ['Equity', 'Canada', 'Toronto, Toronto Ventures', 'America/Toronto', '09:30', '16:00', ''],
  ['Equity', 'United Kingdom', 'London', 'Europe/London', '08:00', '16:30', ''],
  ['Equity', 'Germany', 'XETRA, Berlin, Frankfurt, Munich, Stuttgart', 'Europe/Berlin', '08:00', '20:00', ''],
  ['Equity', 'France', 'Paris', 'Europe/Paris', '09:00', '17:30', ''],
  ['Equity', 'Spain', 'Barcelona, Madrid', 'Europe/Madrid', '09:00', '17:30', ''],
  ['Equity', 'Portugal', 'Lisbon', 'Europe/Lisbon', '08:00', '16:30', ''],
  ['Equity', 'Japan', 'Tokyo', 'Asia/Tokyo', '09:00', '15:00', 'Noon trading break from 11:30 to 12:30 local time'],
  ['Equity', 'India', 'NSE, BSE', 'Asia/Kolkata', '09:15', '15:30', ''],
  [
    'Equity',
    'Mainland China',
    'Shanghai, Shenzhen',
    'Asia/Shanghai',
    '09:30',
    '15:00',
    'Noon trading break from 11:30 to 13:00 local time',
  ],
  ['Equity', 'Hong Kong', 'Hong Kong', 'Asia/Hong_Kong', '09:30', '16:00', 'Noon trading break from 12:00 to 13:00 local time'],
  ['Equity', 'Brazil', 'Sao Paolo', 'America/Sao_Paulo', '10:00', '17:30', ''],
  ['Equity', 'Mexico', 'Mexico', 'America/Mexico_City', '08:30', '15:00', ''],
  ['Equity', 'South Africa', 'Johannesburg', 'Africa/Johannesburg', '09:00', '17:00', ''],
  [
    'Forex',
    'Global',
    'Global',
    'America/New_York',
    '00:00',
    '23:59',
    'The forex market is open 24 hours a day, EXCEPT between 16:00 EST on Friday and 17:00 EST on Sunday',
  ],
  ['Cryptocurrency', 'Global', 'Global', 'UTC', '00:00', '23:59', 'The cryptocurrency market is open 24 hours a day'],
];

function localClock(zone: string, nowMs: number): { weekday: string; hhmm: string } {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const parts = Object.fromEntries(format.formatToParts(new Date(nowMs)).map((p) => [p.type, p.value]));
  return { weekday: parts.weekday ?? '', hhmm: `${parts.hour}:${parts.minute}` };
}

export function marketStatus(nowMs: number): unknown {
  const markets = VENUES.map(([market_type, region, primary_exchanges, zone, local_open, local_close, notes]) => {
    const { weekday, hhmm } = localClock(zone, nowMs);
    const weekend = weekday === 'Sat' || weekday === 'Sun';
    const open =
      market_type === 'Cryptocurrency' ||
      (market_type === 'Forex'
        ? !(weekday === 'Sat' || (weekday === 'Fri' && hhmm >= '16:00') || (weekday === 'Sun' && hhmm < '17:00'))
        : !weekend && hhmm >= local_open && hhmm < local_close);
    return { market_type, region, primary_exchanges, local_open, local_close, current_status: open ? 'open' : 'closed', notes };
  });
  return { endpoint: 'Global Market Open & Close Status', markets };
}

/** ANALYTICS_FIXED_WINDOW and ANALYTICS_SLIDING_WINDOW: the mean and deviation of daily returns per symbol. */
export function analytics(fn: string, query: URLSearchParams, nowMs: number): unknown {
  const symbols = (query.get('SYMBOLS') ?? '').split(',').filter((s) => findInstrument(s) !== undefined);
  if (symbols.length === 0 || query.getAll('RANGE').length === 0 || !query.get('INTERVAL') || !query.get('CALCULATIONS'))
    return invalidApiCall(fn);
  const returns = (s: string) =>
    Array.from({ length: 60 }, (_, i) => priceAt(s, nowMs - i * DAY_MS) / priceAt(s, nowMs - (i + 1) * DAY_MS) - 1);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const stddev = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
  return {
    meta_data: {
      symbols: symbols.join(','),
      min_dt: new Date(nowMs - 60 * DAY_MS).toISOString().slice(0, 10),
      max_dt: new Date(nowMs).toISOString().slice(0, 10),
      ohlc: query.get('OHLC') ?? 'close',
      interval: query.get('INTERVAL'),
    },
    payload: {
      RETURNS_CALCULATIONS: {
        MEAN: Object.fromEntries(symbols.map((s) => [s.toUpperCase(), mean(returns(s))])),
        STDDEV: Object.fromEntries(symbols.map((s) => [s.toUpperCase(), stddev(returns(s))])),
      },
    },
  };
}
