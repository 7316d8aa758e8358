// The dashboard: plain modules, no build step, no network beyond this service's own API. Quotes, broker
// quotes, the overview and the status arrive pushed over one EventSource (/api/stream); while the stream is
// unavailable, every panel refreshes on its own timer instead, no faster than the proxy's cache windows, so
// an open page never spends the upstream budget faster than the cache allows; timers pause while hidden.

const SVG_NS = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

/** An API error body (`{ error: { code, message, status, requestId } }`) made readable. */
class ApiFailure extends Error {
  constructor(status, body, retryAfter) {
    const error = body && typeof body === 'object' && body.error ? body.error : null;
    super(error ? error.message : `the service answered HTTP ${status}`);
    this.status = status;
    this.code = error ? error.code : `HTTP_${status}`;
    this.requestId = error ? error.requestId : null;
    this.retryAfter = retryAfter;
  }
}

/** GET a JSON path; resolves with the body and how old the data is (from the Age header). */
async function api(path) {
  let res;
  try {
    res = await fetch(path, { headers: { accept: 'application/json' } });
  } catch {
    throw new ApiFailure(0, { error: { code: 'NETWORK', message: 'the service cannot be reached' } }, null);
  }
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) throw new ApiFailure(res.status, body, res.headers.get('retry-after'));
  const age = Number(res.headers.get('age'));
  const mode = res.headers.get('x-data-mode');
  if (mode) setMode(mode);
  return {
    body,
    cache: res.headers.get('x-cache'),
    // Which upstream produced the values (quotes and indicators: alpha-vantage, or the yahoo fallback).
    source: res.headers.get('x-data-source'),
    // How fresh an Alpha Vantage-shaped body's prices are: said in a header, its body being the provider's own.
    freshness: parseFreshness(res.headers.get('x-data-freshness')),
    // When the upstream produced this value, in this page's clock.
    producedAt: Date.now() - (Number.isFinite(age) ? age * 1000 : 0),
    partial: res.headers.get('x-partial'),
  };
}

function setMode(mode) {
  const badge = $('mode');
  if (badge.dataset.mode === mode) return;
  badge.dataset.mode = mode;
  badge.textContent = mode;
}

// ---------- small rendering helpers ----------

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'title') node.title = value;
    else node.dataset[key] = value;
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

function showError(panel, failure) {
  const box = panel.querySelector('.error');
  if (!failure) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  box.hidden = false;
  box.textContent = '';
  const retry = failure.retryAfter ? ` Try again in ${failure.retryAfter} s.` : '';
  box.append(el('code', { text: failure.code || 'ERROR' }), ` ${String(failure.message).replace(/\.$/, '')}.${retry}`);
  if (failure.requestId) box.title = `request id ${failure.requestId}`;
  panel.dataset.state = panel.dataset.state === 'ready' ? 'ready' : 'error';
}

/** A short refusal (upstream pacing) is retried once its Retry-After has passed; a long one waits for the timer. */
function retrySoon(failure, task) {
  const seconds = Number(failure.retryAfter);
  if (failure.status === 429 && seconds > 0 && seconds <= 10) setTimeout(task, seconds * 1000 + 100);
}

function setReady(panel) {
  panel.dataset.state = 'ready';
  showError(panel, null);
}

function num(value) {
  const n = typeof value === 'number' ? value : Number(String(value ?? '').replace(/[,%\s]/g, ''));
  return Number.isFinite(n) ? n : null;
}

function signClass(value) {
  const n = num(value);
  if (n === null || n === 0) return '';
  return n > 0 ? 'up' : 'down';
}

function fmt(value, digits = 2) {
  const n = num(value);
  if (n === null) return value == null || value === '' ? '—' : String(value);
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function signed(text) {
  const n = num(text);
  return n !== null && n > 0 && !String(text).startsWith('+') ? `+${text}` : String(text ?? '');
}

function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

function timeOf(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleTimeString();
}

// ---------- how fresh each price is: a badge beside any that is not real-time ----------

/** `X-Data-Freshness: <kind>[; minutes=N]; as-of=<ISO>` as the object the JSON bodies carry. */
function parseFreshness(header) {
  if (!header) return null;
  const [kind, ...params] = header.split(';').map((part) => part.trim());
  const freshness = { kind };
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name === 'minutes') freshness.delayMinutes = Number(value);
    else if (name === 'as-of') freshness.asOf = value;
  }
  return freshness;
}

const FRESHNESS_WORDS = {
  'end-of-day': 'end of day',
  frozen: 'frozen',
  'prior-close': 'prior close',
  halted: 'halted',
  unknown: 'delay unknown',
};

/** The badge beside a price that is not real-time ("delayed 15 min", "prior close", "frozen", "halted"), or null. */
function freshnessBadge(freshness) {
  if (!freshness || freshness.kind === 'realtime') return null;
  const text =
    freshness.kind === 'delayed'
      ? `delayed${freshness.delayMinutes != null ? ` ${freshness.delayMinutes} min` : ''}`
      : (FRESHNESS_WORDS[freshness.kind] ?? freshness.kind);
  const details = [
    freshness.asOf ? `as of ${/T/.test(freshness.asOf) ? new Date(freshness.asOf).toLocaleString() : freshness.asOf}` : null,
    freshness.market ? `market ${freshness.market}` : null,
    freshness.feed ? `${freshness.feed} feed` : null,
  ].filter(Boolean);
  // A previous close or a frozen value from a delayed feed says both.
  const label = freshness.feed === 'delayed' && freshness.kind !== 'delayed' ? `${text} · delayed` : text;
  return el('span', { class: 'freshness', kind: freshness.kind, text: label, title: `Not real-time: ${details.join(', ')}` });
}

/** Puts `freshness`'s badge in `holder` (one badge at most). */
function showFreshness(holder, freshness) {
  holder.querySelector(':scope > .freshness')?.remove();
  const badge = freshnessBadge(freshness);
  if (badge) holder.append(badge);
}

// ---------- freshness: how old is what is shown ----------

const freshness = new Map();

function markFresh(name, result) {
  freshness.set(name, { producedAt: result.producedAt, cache: result.cache, source: result.source });
  renderFreshness();
}

function renderFreshness() {
  for (const node of document.querySelectorAll('[data-fresh-for]')) {
    const f = freshness.get(node.dataset.freshFor);
    if (!f) continue;
    node.textContent = `data age ${ago(Date.now() - f.producedAt)}${f.cache ? ` · ${f.cache.toLowerCase()}` : ''}${f.source ? ` · from ${f.source}` : ''}`;
    node.title = 'Age of the value shown (from the Age header), whether the proxy answered from its cache, and which source produced it.';
  }
}

// ---------- table rendering for records whose exact fields depend on the provider ----------

const COLUMN_LABELS = {
  ticker: 'Symbol',
  ex_dividend_date: 'Ex-date',
  pay_date: 'Pay date',
  cash_amount: 'Amount',
  currency: 'Cur.',
  frequency: 'Per year',
  accountId: 'Account',
  name: 'Name',
  type: 'Type',
  symbol: 'Symbol',
  assetClass: 'Class',
  quantity: 'Qty',
  averageCost: 'Avg cost',
  marketPrice: 'Price',
  marketValue: 'Value',
  unrealizedPnl: 'Unreal. P&L',
  last: 'Last',
  change: 'Change',
  changePercent: 'Change %',
  bid: 'Bid',
  ask: 'Ask',
  volume: 'Volume',
  updatedAt: 'Updated',
};

function cellText(v) {
  if (v == null) return '—';
  if (typeof v === 'number')
    return Number.isInteger(v)
      ? v.toLocaleString('en-US')
      : v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) return timeOf(v);
  return String(v);
}

function renderTable(table, rows, preferred, emptyText, maxRows = 15) {
  const thead = table.tHead;
  const tbody = table.tBodies[0];
  thead.textContent = '';
  tbody.textContent = '';
  if (rows.length === 0) {
    tbody.append(el('tr', {}, el('td', { class: 'empty', text: emptyText })));
    return;
  }
  const present = new Set(rows.flatMap((r) => Object.keys(r).filter((k) => r[k] === null || typeof r[k] !== 'object')));
  const known = preferred.filter((k) => present.has(k));
  // Listed columns when the records have them; otherwise whatever simple fields they carry.
  const columns = (known.length >= 2 ? known : [...present]).slice(0, 8);
  thead.append(el('tr', {}, ...columns.map((c) => el('th', { text: COLUMN_LABELS[c] ?? c, column: c }))));
  const shown = rows.slice(0, maxRows);
  for (const row of shown) {
    tbody.append(
      el(
        'tr',
        {},
        ...columns.map((c) => {
          const v = row[c];
          return el('td', { class: typeof v === 'number' ? 'num' : '', text: cellText(v) });
        }),
      ),
    );
  }
  if (rows.length > shown.length) {
    const more = el('td', { class: 'empty', text: `and ${rows.length - shown.length} more` });
    more.colSpan = columns.length;
    tbody.append(el('tr', {}, more));
  }
}

/** Each row's price cell in `column` gets the badge of its row's freshness. */
function badgeColumn(table, rows, column) {
  const index = [...(table.tHead.rows[0]?.cells ?? [])].findIndex((th) => th.dataset.column === column);
  if (index < 0) return;
  [...table.tBodies[0].rows].forEach((tr, i) => {
    const cell = tr.cells[index];
    if (cell && rows[i]) showFreshness(cell, rows[i].freshness);
  });
}

// ---------- panels ----------

async function refreshOverview() {
  try {
    renderOverview(await api('/api/market/overview'));
  } catch (failure) {
    showError($('overview-panel'), failure);
  }
}

function renderOverview(result) {
  const panel = $('overview-panel');
  const tiles = $('tiles');
  tiles.textContent = '';
  for (const [symbol, entry] of Object.entries(result.body ?? {})) {
    const dir = signClass(entry.change);
    tiles.append(
      el(
        'div',
        { class: `tile ${dir}`, symbol, title: entry.asOf ? `as of ${new Date(entry.asOf).toLocaleString()}` : symbol },
        el('div', { class: 'sym' }, el('span', { text: symbol }), el('span', { text: entry.category ?? '' })),
        el('div', { class: 'name', text: entry.name ?? symbol }),
        el('div', { class: 'price-row' }, el('div', { class: 'price', text: fmt(entry.price) }), freshnessBadge(entry.freshness)),
        el('div', { class: 'chg', text: `${signed(entry.change)} (${signed(entry.changePercent)})` }),
      ),
    );
  }
  markFresh('overview', result);
  setReady(panel);
  if (result.partial) showError(panel, { code: 'PARTIAL', message: `some symbols could not be fetched (${result.partial})` });
}

let quoteSymbol = 'IBM';

const QUOTE_FACTS = [
  ['02. open', 'Open'],
  ['03. high', 'High'],
  ['04. low', 'Low'],
  ['08. previous close', 'Prev. close'],
  ['06. volume', 'Volume'],
  ['07. latest trading day', 'Trading day'],
];

async function refreshQuote() {
  try {
    renderQuote(await api(`/api/provider-a/quote?symbol=${encodeURIComponent(quoteSymbol)}`));
  } catch (failure) {
    showError($('quote-panel'), failure);
    retrySoon(failure, refreshQuote);
  }
}

function renderQuote(result) {
  const panel = $('quote-panel');
  const q = result.body['Global Quote'];
  // A pushed quote for a symbol the page no longer shows (the stream is being switched).
  if (q['01. symbol'] !== quoteSymbol) return;
  $('quote-symbol-out').textContent = q['01. symbol'];
  $('quote-price').textContent = fmt(q['05. price'], 2);
  // REST says it in X-Data-Freshness, a pushed event beside the body.
  showFreshness($('quote-freshness'), result.freshness ?? result.body.freshness);
  const change = $('quote-change');
  change.textContent = `${signed(fmt(q['09. change'], 2))} (${signed(q['10. change percent'])})`;
  change.className = `quote-change ${signClass(q['09. change'])}`;
  const facts = $('quote-facts');
  facts.textContent = '';
  for (const [key, label] of QUOTE_FACTS) {
    const value = key === '06. volume' ? fmt(q[key], 0) : key === '07. latest trading day' ? q[key] : fmt(q[key]);
    facts.append(el('div', {}, el('dt', { text: label }), el('dd', { text: value ?? '—' })));
  }
  markFresh('quote', result);
  setReady(panel);
}

/** Date-keyed rows as [date, value] pairs, oldest first, rows without a number dropped. */
function dated(rows, field) {
  return Object.entries(rows ?? {})
    .map(([date, row]) => [date, num(row[field])])
    .filter(([, v]) => v !== null)
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

/**
 * One chart under the quote (`name` is its freshness label and its element ids' prefix): fetches, draws
 * and writes its note; a failure shows on the quote panel and clears the chart.
 */
async function refreshChart(name, path, toSeries, draw, describe, self) {
  const panel = $('quote-panel');
  const chart = $(`${name}-chart`);
  const note = $(`${name}-note`);
  try {
    const result = await api(path);
    const series = toSeries(result.body);
    draw(chart, series);
    note.textContent = describe(series);
    // Beside the chart's title: how fresh its prices are (the series' X-Data-Freshness).
    showFreshness(chart.previousElementSibling.firstElementChild, result.freshness);
    markFresh(name, result);
    chart.dataset.state = 'ready';
    if (panel.dataset.state === 'ready') showError(panel, null);
  } catch (failure) {
    chart.textContent = '';
    chart.dataset.state = 'error';
    note.textContent = '';
    showError(panel, failure);
    retrySoon(failure, self);
  }
}

function refreshRsi() {
  return refreshChart(
    'rsi',
    `/api/provider-a/technical?symbol=${encodeURIComponent(quoteSymbol)}&indicator=RSI&interval=daily`,
    (body) => dated(body[Object.keys(body).find((k) => k.startsWith('Technical Analysis'))], 'RSI').slice(-90),
    drawRsi,
    (series) => {
      const last = series.at(-1);
      if (!last) return 'No RSI values for this symbol.';
      return `Latest RSI ${last[1].toFixed(2)} on ${last[0]}${last[1] >= 70 ? ' · overbought' : last[1] <= 30 ? ' · oversold' : ''}`;
    },
    refreshRsi,
  );
}

function refreshPrice() {
  return refreshChart(
    'price',
    `/api/provider-a/daily?symbol=${encodeURIComponent(quoteSymbol)}`,
    (body) => dated(body['Time Series (Daily)'], '4. close'),
    drawPrice,
    (series) => {
      const last = series.at(-1);
      if (!last) return 'No daily prices for this symbol.';
      const closes = series.map(([, v]) => v);
      return `Close ${fmt(last[1])} on ${last[0]} · ${series.length}-day range ${fmt(Math.min(...closes))}–${fmt(Math.max(...closes))}`;
    },
    refreshPrice,
  );
}

/** RSI lives in 0..100; the 30/70 band is where it usually stays. */
function drawRsi(chart, series) {
  const W = 400;
  const H = 120;
  const y = (v) => H - (v / 100) * H;
  chart.textContent = '';
  chart.append(svg('rect', { class: 'band', x: 0, y: y(70), width: W, height: y(30) - y(70) }));
  for (const level of [30, 50, 70]) chart.append(svg('line', { class: 'guide', x1: 0, x2: W, y1: y(level), y2: y(level) }));
  if (series.length < 2) return;
  const step = W / (series.length - 1);
  const points = series.map(([, v], i) => `${(i * step).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const line = svg('polyline', { class: 'line', points });
  line.append(svg('title'));
  line.firstChild.textContent = `RSI, ${series.length} days`;
  chart.append(line);
}

/** Closing prices scaled to the chart's own range, with the area under the line shaded. */
function drawPrice(chart, series) {
  const W = 400;
  const H = 120;
  chart.textContent = '';
  if (series.length < 2) return;
  const values = series.map(([, v]) => v);
  const lo = Math.min(...values);
  const span = Math.max(...values) - lo || 1;
  const step = W / (series.length - 1);
  const y = (v) => H - 6 - ((v - lo) / span) * (H - 12);
  const points = series.map(([, v], i) => `${(i * step).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  chart.append(svg('polygon', { class: 'area', points: `0,${H} ${points} ${W},${H}` }));
  const line = svg('polyline', { class: 'line', points });
  line.append(svg('title'));
  line.firstChild.textContent = `Daily close, ${series.length} days`;
  chart.append(line);
}

// ---------- search as you type ----------

const SEARCH_DELAY_MS = 300;
/** Answers already fetched, by lower-cased keywords: retyping a query costs nothing. */
const searchCache = new Map();
let searchTimer = null;
let searchTurn = 0;

async function searchSymbols(keywords) {
  const key = keywords.toLowerCase();
  if (!searchCache.has(key)) {
    const result = await api(`/api/provider-a/search?keywords=${encodeURIComponent(keywords)}`);
    searchCache.set(key, result.body.bestMatches ?? []);
  }
  return searchCache.get(key);
}

function onSearchInput() {
  clearTimeout(searchTimer);
  const keywords = $('quote-symbol').value.trim();
  if (keywords.length < 2) return showSuggestions([]);
  // Debounced: one request when typing pauses, not one per key.
  searchTimer = setTimeout(async () => {
    const turn = ++searchTurn;
    try {
      const matches = await searchSymbols(keywords);
      if (turn === searchTurn) showSuggestions(matches.slice(0, 8));
    } catch {
      if (turn === searchTurn) showSuggestions([]);
    }
  }, SEARCH_DELAY_MS);
}

function showSuggestions(matches) {
  const list = $('quote-suggestions');
  list.textContent = '';
  for (const match of matches) {
    const item = el(
      'li',
      { symbol: match['1. symbol'] },
      el('span', { class: 'sym', text: match['1. symbol'] }),
      el('span', { class: 'name', text: `${match['2. name']} · ${match['4. region']}` }),
    );
    item.setAttribute('role', 'option');
    item.addEventListener('mousedown', (event) => {
      event.preventDefault();
      chooseSymbol(match['1. symbol']);
    });
    list.append(item);
  }
  list.hidden = matches.length === 0;
  $('quote-symbol').setAttribute('aria-expanded', String(!list.hidden));
}

function moveSelection(delta) {
  const items = [...$('quote-suggestions').children];
  if (items.length === 0) return;
  const current = items.findIndex((item) => item.getAttribute('aria-selected') === 'true');
  const next = (current + delta + items.length) % items.length;
  for (const [i, item] of items.entries()) item.setAttribute('aria-selected', String(i === next));
}

function chooseSymbol(symbol) {
  clearTimeout(searchTimer);
  searchTurn += 1;
  $('quote-symbol').value = symbol;
  showSuggestions([]);
  void lookUp(symbol);
}

/** Provider A paces its calls: the RSI and the price history ask after the quote, not alongside it. */
async function lookUp(symbol) {
  quoteSymbol = symbol.toUpperCase();
  // With the stream open, switching its quote topic brings the new quote (its first event is the snapshot).
  if (live.source) connectStream();
  else await refreshQuote();
  await refreshRsi();
  await refreshPrice();
}

let dividendsSymbol = '';

const DIVIDEND_COLUMNS = ['ticker', 'ex_dividend_date', 'pay_date', 'cash_amount', 'currency', 'frequency'];

async function refreshDividends() {
  const panel = $('dividends-panel');
  try {
    const query = dividendsSymbol ? `?symbol=${encodeURIComponent(dividendsSymbol)}` : '';
    const result = await api(`/api/provider-b/dividends${query}`);
    const rows = result.body.results ?? [];
    renderTable(
      $('dividends-table'),
      rows,
      DIVIDEND_COLUMNS,
      dividendsSymbol ? `No dividends for ${dividendsSymbol}.` : 'No dividends.',
      20,
    );
    const count = result.body.count ?? rows.length;
    $('dividends-count').textContent =
      `${count} record${count === 1 ? '' : 's'}${result.body.next ? ' on this page; more available' : ''}${dividendsSymbol ? ` for ${dividendsSymbol}` : ' across all symbols'}.`;
    markFresh('dividends', result);
    setReady(panel);
  } catch (failure) {
    showError(panel, failure);
  }
}

const ACCOUNT_COLUMNS = ['id', 'accountId', 'name', 'displayName', 'type', 'currency'];
const POSITION_COLUMNS = [
  'accountId',
  'symbol',
  'assetClass',
  'quantity',
  'averageCost',
  'marketPrice',
  'marketValue',
  'unrealizedPnl',
  'currency',
];
const QUOTE_COLUMNS = ['symbol', 'last', 'change', 'changePercent', 'bid', 'ask', 'volume', 'updatedAt'];

async function refreshBroker(withAccounts) {
  const panel = $('broker-panel');
  try {
    const health = await api('/api/broker/health');
    const h = health.body;
    const state = $('broker-state');
    state.dataset.status = h.status;
    $('broker-state-text').textContent =
      `${h.broker}: ${h.status.replace('_', ' ')}${h.latencyMs != null ? ` · ${h.latencyMs} ms` : ''}${h.message ? ` · ${h.message}` : ''}`;
    markFresh('broker', health);
    if (h.status !== 'connected') {
      // Accounts and positions cannot be read without a session; asking would only produce errors.
      for (const id of ['accounts-table', 'positions-table', 'broker-quotes-table'])
        renderTable($(id), [], [], 'Not available until the broker is connected.');
      setReady(panel);
      return;
    }
    if (withAccounts) {
      const accounts = await api('/api/broker/accounts');
      renderTable($('accounts-table'), accounts.body.accounts ?? [], ACCOUNT_COLUMNS, 'No accounts.');
    }
    const positions = await api('/api/broker/positions');
    const list = positions.body.positions ?? [];
    renderTable($('positions-table'), list, POSITION_COLUMNS, 'No open positions.');
    badgeColumn($('positions-table'), list, 'marketPrice');
    const symbols = [...new Set(list.map((p) => p.symbol).filter(Boolean))].slice(0, 10);
    setBrokerSymbols(symbols.length ? symbols : ['SPY', 'AAPL']);
    if (!streaming('brokerQuotes'))
      renderBrokerQuotes(await api(`/api/broker/quotes?symbols=${encodeURIComponent(brokerSymbols.join(','))}`));
    setReady(panel);
  } catch (failure) {
    showError(panel, failure);
  }
}

/** The values last shown per broker quote, so that each update marks the cells it changed. */
const shownBrokerQuotes = new Map();

/** Broker quotes arrive pushed on every tick of the broker's feed (or from a snapshot): each change is marked. */
function renderBrokerQuotes(result) {
  const table = $('broker-quotes-table');
  const quotes = Object.values(result.body.quotes ?? {});
  renderTable(table, quotes, QUOTE_COLUMNS, 'No quotes.');
  badgeColumn(table, quotes, 'last');
  const columns = [...(table.tHead.rows[0]?.cells ?? [])].map((th) => th.dataset.column);
  quotes.slice(0, table.tBodies[0].rows.length).forEach((quote, i) => {
    const before = shownBrokerQuotes.get(quote.symbol);
    shownBrokerQuotes.set(quote.symbol, quote);
    if (!before) return;
    columns.forEach((column, j) => {
      const now = quote[column];
      const was = before[column];
      if (column === 'symbol' || column === 'updatedAt' || now === was || now == null || was == null) return;
      // A fresh cell per render: the mark's animation plays once per change.
      table.tBodies[0].rows[i].cells[j].dataset.change = typeof now === 'number' && now < was ? 'down' : 'up';
    });
  });
  markFresh('broker-quotes', result);
}

async function refreshStatus() {
  try {
    renderStatus(await api('/api/system/status'));
  } catch (failure) {
    $('overall').dataset.status = 'error';
    $('overall-text').textContent = 'status unavailable';
    showError($('status-panel'), failure);
  }
}

function renderStatus(result) {
  const panel = $('status-panel');
  const s = result.body;
  setMode(s.mode);
  const overall = $('overall');
  overall.dataset.status = s.status;
  $('overall-text').textContent = `${s.status} · v${s.version}`;
  overall.title = s.reason;
  $('status-reason').textContent = s.reason;
  const list = $('upstreams');
  list.textContent = '';
  for (const u of s.upstreams) list.append(renderUpstream(u));
  const store =
    s.store.kind +
    (s.store.redisConfigured
      ? ` (Redis ${s.store.redisReachable === false ? 'unreachable' : s.store.redisReachable ? 'reachable' : 'unknown'}${s.store.fallback ? ', local fallback' : ''})`
      : '');
  const ratio = s.cache.hitRatio == null ? '—' : `${Math.round(s.cache.hitRatio * 100)}%`;
  $('status-foot').textContent =
    `Store: ${store} · cache ${s.cache.entries ?? '—'} entries, hit ratio ${ratio}${mcpUse(s.mcp)} · up ${ago(s.uptimeSeconds * 1000)}`;
  markFresh('status', { producedAt: Date.parse(s.checkedAt) || Date.now(), cache: null });
  setReady(panel);
}

/** What AI agents asked through /mcp (null when MCP=off). */
function mcpUse(mcp) {
  if (mcp == null) return '';
  const failed = mcp.errors > 0 ? `, ${mcp.errors} failed` : '';
  return ` · MCP ${mcp.calls} tool call${mcp.calls === 1 ? '' : 's'}${failed}`;
}

function renderUpstream(u) {
  const stateText = { ok: 'ok', failing: 'failing', idle: 'no calls yet', not_configured: 'not configured' }[u.state] ?? u.state;
  const box = el(
    'div',
    { class: 'upstream', state: u.state, upstream: u.id },
    el('div', { class: 'upstream-head' }, el('span', { text: u.label }), el('span', { class: 'state', text: stateText })),
  );
  const meta = el('div', { class: 'upstream-meta' });
  const parts = [];
  if (u.lastSuccessAt) parts.push(`last success ${ago(Date.now() - Date.parse(u.lastSuccessAt))} ago`);
  if (u.cache.hitRatio != null) parts.push(`cache hits ${Math.round(u.cache.hitRatio * 100)}%`);
  parts.push(`${u.calls} call${u.calls === 1 ? '' : 's'}`);
  meta.append(parts.join(' · '));
  if (u.lastError)
    meta.append(el('div', { class: 'err', text: `last error ${timeOf(u.lastError.at)}: ${u.lastError.code}, ${u.lastError.message}` }));
  box.append(meta);
  if (u.budget && u.budget.limitMinute == null && u.budget.limitDay == null) {
    box.append(
      el('div', { class: 'upstream-meta', text: `budget: no cap · ${u.budget.usedMinute} this minute, ${u.budget.usedDay} today` }),
    );
  } else if (u.budget) {
    box.append(gauge('minute', u.budget.usedMinute, u.budget.limitMinute, u.budget.leftMinute));
    box.append(gauge('day', u.budget.usedDay, u.budget.limitDay, u.budget.leftDay));
    const back = u.budget.backedOffUntil ?? u.budget.nextAvailableAt;
    if (back) box.append(el('div', { class: 'upstream-meta', text: `next call possible at ${timeOf(back)}` }));
  }
  return box;
}

/** A bar showing how much of the budget is left in one window. */
function gauge(label, used, limit, left) {
  const bar = el('div', { class: 'bar' });
  const fill = el('div', { class: 'fill' });
  bar.append(fill);
  let text;
  if (limit == null) {
    fill.style.width = '100%';
    text = `${used} used, no cap`;
  } else {
    const share = limit > 0 ? left / limit : 0;
    fill.style.width = `${Math.round(share * 100)}%`;
    if (share < 0.2) fill.classList.add('low');
    else if (share < 0.5) fill.classList.add('mid');
    text = `${left} of ${limit} left`;
  }
  const box = el(
    'div',
    { class: 'gauge', gauge: label, title: `${used} used this ${label}` },
    el('span', { text: `per ${label}` }),
    bar,
    el('span', { class: 'num', text }),
  );
  return box;
}

// ---------- live push ----------

let brokerSymbols = [];
const live = { source: null, url: '', open: false, retry: null };

/** True while the stream is open and carries this topic: its polling timer then skips its turns. */
function streaming(kind) {
  return live.open && (kind !== 'brokerQuotes' || live.url.includes('brokerQuotes='));
}

function setBrokerSymbols(symbols) {
  if (symbols.join(',') === brokerSymbols.join(',')) return;
  brokerSymbols = symbols;
  if (live.source) connectStream();
}

function streamUrl() {
  const params = new URLSearchParams({ quote: quoteSymbol, overview: 'true', status: 'true' });
  if (brokerSymbols.length > 0) params.set('brokerQuotes', brokerSymbols.join(','));
  return `/api/stream?${params}`;
}

/** A pushed event as the panels' renderers take it; its id starts with when the upstream answered. */
function pushed(event) {
  const producedAt = Number(String(event.lastEventId).split('-')[0]);
  return {
    body: JSON.parse(event.data),
    cache: 'LIVE',
    producedAt: Number.isFinite(producedAt) && producedAt > 0 ? producedAt : Date.now(),
    partial: null,
  };
}

const STREAM_PANELS = { quote: 'quote-panel', brokerQuotes: 'broker-panel', overview: 'overview-panel', status: 'status-panel' };

/** Opens (or switches) the one stream this page needs; without EventSource the timers do the work. */
function connectStream() {
  if (typeof EventSource === 'undefined') return;
  const url = streamUrl();
  if (live.source && live.url === url) return;
  if (live.source) live.source.close();
  clearTimeout(live.retry);
  live.url = url;
  live.open = false;
  const source = new EventSource(url);
  live.source = source;
  source.addEventListener('open', () => {
    live.open = true;
  });
  source.addEventListener('quote', (event) => renderQuote(pushed(event)));
  source.addEventListener('overview', (event) => renderOverview(pushed(event)));
  source.addEventListener('status', (event) => renderStatus(pushed(event)));
  source.addEventListener('brokerQuotes', (event) => renderBrokerQuotes(pushed(event)));
  source.addEventListener('error', (event) => {
    if (event.data) {
      // A topic the service cannot serve right now: shown on its panel; the stream goes on.
      const body = JSON.parse(event.data);
      const panel = $(STREAM_PANELS[String(body.topic).split('=')[0]] ?? 'status-panel');
      showError(panel, new ApiFailure(body.error ? body.error.status : 0, body, null));
      return;
    }
    // The connection dropped: the timers take over until it is back (the browser reconnects by itself).
    live.open = false;
    if (source.readyState === EventSource.CLOSED && live.source === source) {
      // Not a stream (refused, or streams unavailable here): keep polling, try again in a minute.
      live.source = null;
      live.retry = setTimeout(connectStream, 60_000);
    }
  });
}

// ---------- timers ----------

const timers = [];

/** Runs `task` now and every `seconds`, skipping turns while the tab is hidden or the last run is pending. */
function every(seconds, task) {
  let running = false;
  const run = async () => {
    if (running || document.hidden) return;
    running = true;
    try {
      await task();
    } finally {
      running = false;
    }
  };
  timers.push(run);
  setInterval(run, seconds * 1000);
  return run();
}

function wireForms() {
  $('quote-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const selected = $('quote-suggestions').querySelector('[aria-selected="true"]');
    const value = selected ? selected.dataset.symbol : $('quote-symbol').value.trim();
    if (value) chooseSymbol(value);
  });
  const input = $('quote-symbol');
  input.addEventListener('input', onSearchInput);
  input.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      moveSelection(event.key === 'ArrowDown' ? 1 : -1);
    } else if (event.key === 'Escape') {
      showSuggestions([]);
    }
  });
  input.addEventListener('blur', () => showSuggestions([]));
  $('dividends-form').addEventListener('submit', (event) => {
    event.preventDefault();
    dividendsSymbol = $('dividends-symbol').value.trim().toUpperCase();
    void refreshDividends();
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) for (const run of timers) run();
  });
}

function start() {
  wireForms();
  setInterval(renderFreshness, 1000);
  // Intervals follow the default cache windows: a refresh inside the fresh window is a cache hit.
  // While the stream is open, the timers of its topics skip their turns.
  const unlessStreamed = (kind, task) => () => (streaming(kind) ? undefined : task());
  void every(10, unlessStreamed('status', refreshStatus));
  let brokerTurn = 0;
  const firstRound = [
    every(60, unlessStreamed('overview', refreshOverview)),
    // Provider A paces its calls: the RSI and the price history ask after the quote, not alongside it.
    every(60, unlessStreamed('quote', refreshQuote))
      .then(() => every(600, refreshRsi))
      .then(() => every(1800, refreshPrice)),
    every(900, refreshDividends),
    every(15, () => refreshBroker(brokerTurn++ % 4 === 0)),
  ];
  // Once the first data has arrived, show the budget and health it produced rather than wait 10 s, and
  // switch to the stream (whose first events are then cache hits).
  void Promise.allSettled(firstRound).then(() => {
    void refreshStatus();
    connectStream();
  });
}

start();
