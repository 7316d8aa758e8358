// Loads the dashboard in headless Chromium against the sandbox and checks that it renders real values
// with no console error. Skips when Chromium is absent locally; with CI set, a missing browser fails.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startApp } from '../helpers/app.js';
import { callTool, mcpClient } from '../helpers/mcp-client.js';
import { NO_FALLBACK, UNCAPPED } from '../helpers/config.js';

/** These tests are about the answers, not what they cost: provider A alone (no fallback), with no budget, pacing or caller limit. */
const ANSWERS_ENV = { ...UNCAPPED, ...NO_FALLBACK };

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const IN_CI = Boolean(process.env.CI) && process.env.CI !== 'false';
const OUTPUT_DIR = 'test-output';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const skip =
  !existsSync(CHROMIUM) && !IN_CI
    ? `Chromium not found at ${CHROMIUM} (apt-get install chromium); set CI=true to make this test mandatory`
    : false;

async function launch(t: TestContext): Promise<BrowserContext> {
  assert.ok(existsSync(CHROMIUM), `CI is set but Chromium is missing at ${CHROMIUM}`);
  const profile = mkdtempSync(join(tmpdir(), 'mdp-chromium-'));
  // A persistent context is how Playwright takes a fresh --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 1000 },
  });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** Every console error, uncaught page error and failed request. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // Switching the stream's topics closes the old EventSource, which aborts its request by design.
    if (new URL(request.url()).pathname === '/api/stream' && request.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  // Names the URL behind a "Failed to load resource" console line.
  page.on('response', async (response) => {
    if (response.status() < 400) return;
    const where = new URL(response.url());
    problems.push(`HTTP ${response.status()}: ${where.pathname}${where.search} ${(await response.text().catch(() => '')).slice(0, 300)}`);
  });
  return problems;
}

/** Waits until a panel has rendered data or an error, and says which, with the error it shows. */
async function settle(page: Page, selector: string): Promise<{ selector: string; state: string; error: string }> {
  await page.waitForSelector(`${selector}[data-state="ready"], ${selector}[data-state="error"]`, { state: 'attached', timeout: 30_000 });
  return page.$eval(
    selector,
    (node, sel) => ({
      selector: sel,
      state: (node as HTMLElement).dataset.state ?? '',
      error: (node.closest('section') ?? node).querySelector('.error:not([hidden])')?.textContent ?? '',
    }),
    selector,
  );
}

const PANELS = ['#overview-panel', '#quote-panel', '#status-panel', '#dividends-panel', '#broker-panel'];

test('the dashboard renders tiles, a quote, the price and RSI charts and the status panel with real values', { skip }, async (t) => {
  // Production budget per day and pacing for provider A (its simulator refuses more than one call per
  // second; 1200 ms is the default spacing, whose slack absorbs a loaded machine's send jitter). Per minute
  // 8, not 5: a symbol costs three calls (quote, RSI, daily series), and the lookup below comes within the
  // same minute as the page's own three: six, which a caller alone has of eight (two are kept for others).
  const running = await startApp(t, {
    env: { ...ANSWERS_ENV, ALPHA_VANTAGE_CALLS_PER_MINUTE: '8', ALPHA_VANTAGE_CALLS_PER_DAY: '500', ALPHA_VANTAGE_MIN_INTERVAL_MS: '1200' },
  });
  const { url } = running;
  // An agent asked something (a tool that calls no provider, so the budget below is the page's own).
  await callTool(await mcpClient(t, running), 'get_service_status');
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);

  const started = Date.now();
  await page.goto(`${url}/`, { waitUntil: 'load' });
  const settled = await Promise.all([...PANELS, '#rsi-chart', '#price-chart'].map((panel) => settle(page, panel)));
  const readyMs = Date.now() - started;
  assert.deepEqual(
    settled.filter((s) => s.state !== 'ready'),
    [],
    `every panel rendered; problems: ${problems.join(' | ')}`,
  );
  await page.waitForSelector('#rsi-chart polyline', { state: 'attached' });
  const navigation = await page.evaluate(() => {
    const entry = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    return { domContentLoaded: Math.round(entry.domContentLoadedEventEnd), load: Math.round(entry.loadEventEnd) };
  });
  t.diagnostic(
    `dashboard: load event ${navigation.load} ms, DOMContentLoaded ${navigation.domContentLoaded} ms, every panel rendered ${readyMs} ms after navigation`,
  );

  assert.equal(await page.textContent('#mode'), 'sandbox');

  // Market overview tiles: prices with two decimals, coloured by the sign of the change.
  const tiles = await page.$$eval('.tile', (nodes) =>
    nodes.map((n) => ({
      cls: n.className,
      price: n.querySelector('.price')?.textContent ?? '',
      chg: n.querySelector('.chg')?.textContent ?? '',
    })),
  );
  assert.ok(tiles.length >= 5, `tiles: ${tiles.length}`);
  for (const tile of tiles) {
    assert.match(tile.price, /^\d{1,3}(,\d{3})*\.\d{2}$/);
    const change = Number(tile.chg.split(' ')[0]);
    assert.ok(Number.isFinite(change), tile.chg);
    if (change > 0) assert.match(tile.cls, /\bup\b/);
    if (change < 0) assert.match(tile.cls, /\bdown\b/);
  }

  // The quote and its RSI chart.
  assert.equal(await page.textContent('#quote-symbol-out'), 'IBM');
  assert.match((await page.textContent('#quote-price')) ?? '', /^\d{1,3}(,\d{3})*\.\d{2}$/);
  assert.match((await page.textContent('#quote-change')) ?? '', /^[+-]?\d+\.\d{2} \([+-]?-?\d+\.\d{4}%\)$/);
  const points = ((await page.getAttribute('#rsi-chart polyline', 'points')) ?? '').split(' ').map((p) => p.split(',').map(Number));
  assert.ok(points.length >= 10, `RSI points: ${points.length}`);
  assert.ok(
    points.every(([x, y]) => x! >= 0 && x! <= 400 && y! >= 0 && y! <= 120),
    'RSI points inside the chart',
  );
  assert.match((await page.textContent('#rsi-note')) ?? '', /^Latest RSI \d+\.\d{2} on \d{4}-\d{2}-\d{2}/);
  // The price chart from the daily series: 100 closes inside the chart.
  await page.waitForSelector('#price-chart polyline', { state: 'attached' });
  const closes = ((await page.getAttribute('#price-chart polyline', 'points')) ?? '').split(' ').map((p) => p.split(',').map(Number));
  assert.equal(closes.length, 100);
  assert.ok(
    closes.every(([x, y]) => x! >= 0 && x! <= 400 && y! >= 0 && y! <= 120),
    'price points inside the chart',
  );
  assert.match(
    (await page.textContent('#price-note')) ?? '',
    /^Close [\d,]+\.\d{2} on \d{4}-\d{2}-\d{2} · 100-day range [\d,]+\.\d{2}–[\d,]+\.\d{2}$/,
  );

  // The status panel: every known upstream, a provider A budget gauge with real figures, freshness.
  const rows = await page.$$eval('.upstream', (nodes) => nodes.map((n) => (n as HTMLElement).dataset.upstream));
  for (const id of ['provider-a', 'provider-b', 'overview', 'broker']) assert.ok(rows.includes(id), `status row ${id}`);
  // The status refreshes once the first data is in, so it shows what loading the page cost.
  await page.waitForSelector('.upstream[data-upstream="provider-a"][data-state="ok"]', { state: 'attached', timeout: 15_000 });
  assert.match((await page.textContent('.upstream[data-upstream="provider-a"] [data-gauge="minute"] .num')) ?? '', /^[2-5] of 8 left$/);
  assert.match((await page.textContent('.upstream[data-upstream="provider-a"] [data-gauge="day"] .num')) ?? '', /^49[0-7] of 500 left$/);
  assert.match((await page.textContent('.upstream[data-upstream="provider-a"] .upstream-meta')) ?? '', /last success \d+ s ago/);
  assert.match((await page.textContent('#overall-text')) ?? '', /^(ok|degraded) · v1\.0\.0$/);
  assert.match((await page.textContent('#status-foot')) ?? '', / · MCP 1 tool call · /, "the agents' use");
  assert.match((await page.textContent('[data-fresh-for="overview"]')) ?? '', /^data age \d+ s · (miss|hit|stale|live)$/);
  // Answers over HTTP say their source (X-Data-Source); a pushed stream event carries only the body.
  assert.match(
    (await page.textContent('[data-fresh-for="quote"]')) ?? '',
    /^data age \d+ s · ((miss|hit|stale) · from (alpha-vantage|yahoo)|live)$/,
  );

  // Dividends and broker rendered rows.
  assert.ok((await page.$$('#dividends-table tbody tr td:not(.empty)')).length > 0, 'dividend rows');
  assert.match((await page.textContent('#broker-state-text')) ?? '', /:/);

  mkdirSync(OUTPUT_DIR, { recursive: true });
  await page.screenshot({ path: join(OUTPUT_DIR, 'dashboard.png'), fullPage: true });
  assert.deepEqual(problems, [], 'no console error, page error or failed request');

  // Interactions: a lookup and a dividends filter.
  await page.fill('#quote-symbol', 'msft');
  await page.click('#quote-form button');
  await page.waitForFunction(() => document.getElementById('quote-symbol-out')?.textContent === 'MSFT');
  await page.fill('#dividends-symbol', 'aapl');
  await page.click('#dividends-form button');
  await page.waitForFunction(() => /for AAPL\.$/.test(document.getElementById('dividends-count')?.textContent ?? ''));
  const tickers = await page.$$eval('#dividends-table tbody tr:not(:has(td.empty))', (trs) => trs.map((tr) => tr.textContent ?? ''));
  assert.ok(
    tickers.every((row) => row.includes('AAPL') || row.includes('No dividends')),
    'filtered by symbol',
  );
  assert.deepEqual(problems, []);
});

test('the quote box searches as you type (debounced, cached) and a chosen match loads its quote, RSI and price chart', {
  skip,
}, async (t) => {
  const { url, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  const searches: string[] = [];
  const dailies: string[] = [];
  page.on('request', (request) => {
    const where = new URL(request.url());
    if (where.pathname === '/api/provider-a/search') searches.push(where.searchParams.get('keywords') ?? '');
    if (where.pathname === '/api/provider-a/daily') dailies.push(where.searchParams.get('symbol') ?? '');
  });
  const upstreamSearches = () => sandbox.alphaVantage.count();
  // The page's clock runs as usual, but is held while the keys are typed: a loaded machine may take longer
  // than the debounce between two keystrokes, and that would be no pause in the typing.
  await page.clock.install();
  await page.goto(`${url}/`, { waitUntil: 'load' });
  await settle(page, '#price-chart');
  const callsBefore = upstreamSearches();

  await page.fill('#quote-symbol', '');
  const typeHeld = async (text: string) => {
    await page.clock.pauseAt(new Date((await page.evaluate(() => Date.now())) + 1_000));
    await page.type('#quote-symbol', text, { delay: 40 });
    await page.clock.resume();
  };
  await typeHeld('micro');
  await page.waitForSelector('#quote-suggestions li[data-symbol="MSFT"]');
  assert.deepEqual(searches, ['micro'], 'one request once typing pauses, not one per key');
  assert.equal(await page.getAttribute('#quote-symbol', 'aria-expanded'), 'true');
  const names = await page.$$eval('#quote-suggestions li', (items) => items.map((li) => li.textContent ?? ''));
  assert.ok(
    names.some((n) => n.startsWith('MSFT') && n.includes('Microsoft Corporation')),
    names.join(' | '),
  );

  // Retyping the same words is answered from the page's own cache.
  await page.fill('#quote-symbol', '');
  await page.waitForSelector('#quote-suggestions', { state: 'hidden' });
  await typeHeld('MICRO');
  await page.waitForSelector('#quote-suggestions li[data-symbol="MSFT"]');
  assert.deepEqual(searches, ['micro']);

  await page.click('#quote-suggestions li[data-symbol="MSFT"]');
  await page.waitForFunction(() => document.getElementById('quote-symbol-out')?.textContent === 'MSFT');
  await page.waitForFunction(
    () =>
      /on \d{4}-/.test(document.getElementById('price-note')?.textContent ?? '') &&
      document.getElementById('price-chart')?.dataset.state === 'ready',
  );
  assert.deepEqual(dailies, ['IBM', 'MSFT']);
  assert.equal(await page.inputValue('#quote-symbol'), 'MSFT');
  assert.equal(await page.isHidden('#quote-suggestions'), true);
  // Keyboard: arrow down picks the first suggestion, Enter looks it up.
  await page.fill('#quote-symbol', '');
  await page.type('#quote-symbol', 'apple', { delay: 40 });
  await page.waitForSelector('#quote-suggestions li[data-symbol="AAPL"]');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('quote-symbol-out')?.textContent === 'AAPL');
  assert.ok(upstreamSearches() > callsBefore);
  assert.deepEqual(problems, []);
});

test('the dashboard shows API errors as readable messages', { skip }, async (t) => {
  const { url, sandbox } = await startApp(t, { env: ANSWERS_ENV });
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  sandbox.alphaVantage.setFaults({ fault: 'http5xx', status: 503 });
  await page.goto(`${url}/`, { waitUntil: 'load' });
  await page.waitForSelector('#quote-panel .error:not([hidden])', { timeout: 30_000 });
  const message = (await page.textContent('#quote-panel .error')) ?? '';
  assert.match(message, /^UPSTREAM_ERROR \S.+\.$/);
  assert.ok(!message.includes('{') && !message.includes(sandbox.alphaVantage.origin), message);
  assert.equal(await page.getAttribute('#quote-panel', 'data-state'), 'error');
  // The rest of the page keeps working.
  await page.waitForSelector('#status-panel[data-state="ready"]');
  await page.waitForSelector('.upstream[data-upstream="provider-a"][data-state="failing"]', { timeout: 30_000 });
});

test('the API docs render every documented operation in the browser, offline', { skip }, async (t) => {
  const { url, get } = await startApp(t, { env: ANSWERS_ENV });
  const doc = (await get('/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  const external: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(url) && !request.url().startsWith('data:')) external.push(request.url());
  });
  await page.goto(`${url}/api/docs`, { waitUntil: 'load' });
  await page.waitForSelector('.opblock', { timeout: 30_000 });
  assert.equal(await page.locator('.opblock').count(), operations);
  assert.match((await page.textContent('.info .title')) ?? '', /1\.0\.0/);
  assert.deepEqual(external, [], 'no request leaves the service');
  assert.deepEqual(problems, []);
});

/** Requests the page sends to `path`: when, and to which URL. */
function requestsTo(page: Page, path: string): { at: number; url: URL }[] {
  const sent: { at: number; url: URL }[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname === path) sent.push({ at: Date.now(), url });
  });
  return sent;
}

test('the dashboard takes quotes, broker quotes, the overview and the status from the stream, not from its timers', { skip }, async (t) => {
  // The simulated market held open: broker quotes tick (outside US hours they hold still, as IBKR's do).
  const { url } = await startApp(t, { env: ANSWERS_ENV, sandbox: { ibkr: { sessionAt: () => 'regular' } } });
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  const streams = requestsTo(page, '/api/stream');
  const brokerQuotes = requestsTo(page, '/api/broker/quotes');
  const overviews = requestsTo(page, '/api/market/overview');
  await page.goto(`${url}/`, { waitUntil: 'load' });
  await page.waitForFunction(() => /· live$/.test(document.querySelector('[data-fresh-for="overview"]')?.textContent ?? ''), undefined, {
    timeout: 30_000,
  });
  const { at: openedAt, url: stream } = streams.at(-1)!;
  assert.equal(stream.searchParams.get('overview'), 'true');
  assert.equal(stream.searchParams.get('status'), 'true');
  assert.equal(stream.searchParams.get('quote'), 'IBM');
  assert.ok(stream.searchParams.get('brokerQuotes'), 'broker quotes of the positions are streamed');
  // Broker quotes tick: the table is rendered again on every pushed tick, with no request for them, and
  // the cells a tick changed are marked (up or down).
  await page.evaluate(() => {
    const w = window as unknown as { renders: number };
    w.renders = 0;
    new MutationObserver(() => {
      w.renders += 1;
    }).observe(document.querySelector('#broker-quotes-table tbody')!, { childList: true });
  });
  const countedFrom = Date.now();
  await page.waitForFunction(() => (window as unknown as { renders: number }).renders >= 10, undefined, { timeout: 15_000 });
  t.diagnostic(`broker quotes table: 10 renders in ${Date.now() - countedFrom} ms`);
  await page.waitForSelector('#broker-quotes-table td[data-change="up"], #broker-quotes-table td[data-change="down"]', {
    state: 'attached',
    timeout: 15_000,
  });
  assert.match((await page.textContent('[data-fresh-for="broker-quotes"]')) ?? '', /^data age \d+ (s|min) · live$/);
  assert.deepEqual(
    brokerQuotes.filter((r) => r.at > openedAt),
    [],
    'no broker quotes polled while streaming',
  );
  assert.deepEqual(
    overviews.filter((r) => r.at > openedAt),
    [],
    'no overview polled while streaming',
  );
  assert.match((await page.textContent('[data-fresh-for="quote"]')) ?? '', /^data age \d+ (s|min) · live$/);
  assert.deepEqual(problems, []);
});

test('without streams (refused here), the dashboard keeps every panel fresh by polling', { skip }, async (t) => {
  const { url } = await startApp(t, { env: ANSWERS_ENV });
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  await page.route('**/api/stream?**', (route) =>
    route.fulfill({
      status: 503,
      contentType: 'application/json',
      body: '{"error":{"code":"BROKER_UNAVAILABLE","message":"no streams here","status":503,"requestId":"x"}}',
    }),
  );
  const refusedAt = page
    .waitForRequest((request) => new URL(request.url()).pathname === '/api/stream', { timeout: 30_000 })
    .then(() => Date.now());
  await page.goto(`${url}/`, { waitUntil: 'load' });
  const settled = await Promise.all(PANELS.map((panel) => settle(page, panel)));
  assert.deepEqual(
    settled.filter((s) => s.state !== 'ready'),
    [],
  );
  const at = await refusedAt;
  // The status timer (10 s) still runs after the stream was refused.
  await page.waitForRequest((request) => new URL(request.url()).pathname === '/api/system/status' && Date.now() > at + 1_000, {
    timeout: 30_000,
  });
  assert.match((await page.textContent('[data-fresh-for="overview"]')) ?? '', /· (miss|hit|stale)$/);
});

test('the dividends table fits its panel at 1,400, 1,280 and 1,024 px; narrower, it scrolls inside the panel, never the page', {
  skip,
}, async (t) => {
  const { url } = await startApp(t, { env: ANSWERS_ENV });
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${url}/`, { waitUntil: 'load' });
  await page.waitForSelector('#dividends-panel[data-state="ready"]', { timeout: 30_000 });
  await page.waitForSelector('#broker-panel[data-state="ready"], #broker-panel[data-state="error"]', { timeout: 30_000 });
  assert.ok((await page.$$('#dividends-table tbody tr td:not(.empty)')).length > 0, 'dividend rows');
  const measure = () =>
    // No function declared inside: the test runner's transform would name it with a helper the page lacks.
    page.evaluate(() => {
      const panel = document.querySelector('#dividends-panel')!.getBoundingClientRect();
      const table = document.querySelector('#dividends-table')!.getBoundingClientRect();
      const lastHeader = document.querySelector('#dividends-table thead th:last-child')!.getBoundingClientRect();
      const wrap = document.querySelector<HTMLElement>('#dividends-panel .table-wrap')!;
      return {
        panel: { left: panel.left, right: panel.right },
        table: { left: table.left, right: table.right },
        lastColumnRight: lastHeader.right,
        wrapScrolls: wrap.scrollWidth > wrap.clientWidth,
        wrapRight: wrap.getBoundingClientRect().right,
        pageWidth: document.documentElement.scrollWidth,
        viewport: window.innerWidth,
      };
    });
  for (const width of [1400, 1280, 1024]) {
    await page.setViewportSize({ width, height: 1000 });
    const m = await measure();
    const at = `at ${width} px: ${JSON.stringify(m)}`;
    assert.ok(m.table.right <= m.panel.right && m.table.left >= m.panel.left, `the table inside its panel ${at}`);
    assert.ok(m.lastColumnRight <= m.wrapRight + 0.5, `the last column shown whole ${at}`);
    assert.equal(m.wrapScrolls, false, `no scrolling needed ${at}`);
    assert.equal(m.pageWidth, width, `the page no wider than the window ${at}`);
  }
  for (const width of [768, 390]) {
    await page.setViewportSize({ width, height: 1000 });
    const m = await measure();
    const at = `at ${width} px: ${JSON.stringify(m)}`;
    assert.ok(m.wrapRight <= m.panel.right, `the scroll box inside its panel ${at}`);
    assert.equal(m.pageWidth, width, `the page no wider than the window ${at}`);
  }
  mkdirSync(OUTPUT_DIR, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.locator('#dividends-panel').screenshot({ path: join(OUTPUT_DIR, 'dividends-1280.png') });
});

test('a price that is not real-time carries a badge saying what it is instead: delayed broker quotes, an end-of-day quote', {
  skip,
}, async (t) => {
  // An IBKR account without a market data subscription (a paper account's default), the market held open: its
  // quotes are delayed ("6509": "DPB", as recorded). Provider A without a plan: its quote is end of day.
  const { url } = await startApp(t, { env: ANSWERS_ENV, sandbox: { ibkr: { sessionAt: () => 'regular', marketData: 'delayed' } } });
  const context = await launch(t);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = watchProblems(page);
  await page.goto(`${url}/`, { waitUntil: 'load' });
  await page.waitForSelector('#broker-quotes-table td .freshness', { timeout: 30_000 });
  const badges = await page.$$eval('#broker-quotes-table tbody tr', (rows) =>
    rows.map((row) => {
      const badge = row.querySelector('.freshness') as HTMLElement | null;
      return { text: badge?.textContent, kind: badge?.dataset.kind, inLast: badge?.closest('td')?.textContent?.match(/^[\d,.]+/) !== null };
    }),
  );
  assert.ok(badges.length > 0);
  for (const badge of badges) assert.deepEqual(badge, { text: 'delayed', kind: 'delayed', inLast: true }, 'beside the last price');
  await page.waitForSelector('#quote-freshness .freshness');
  assert.equal(await page.textContent('#quote-freshness .freshness'), 'end of day');
  assert.match((await page.getAttribute('#quote-freshness .freshness', 'title')) ?? '', /^Not real-time: as of \d{4}-\d{2}-\d{2}$/);
  // A real-time price has none: the same account with a subscription.
  await page.waitForSelector('#positions-table tbody tr', { state: 'attached' });
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const shot = join(OUTPUT_DIR, 'dashboard-freshness.png');
  await page.screenshot({ path: shot, fullPage: true });
  // The picture in docs/reference/freshness.md, taken again with UPDATE_DOCS_SCREENSHOT=1.
  if (process.env.UPDATE_DOCS_SCREENSHOT === '1')
    await page.screenshot({ path: join('docs', 'images', 'dashboard-freshness.png'), fullPage: true });
  assert.deepEqual(problems, [], 'no console error, page error or failed request');
});
