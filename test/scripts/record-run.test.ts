// `npm run record` end to end against the built-in simulators (they speak the providers' wire), writing
// into a temporary copy of the corpus: every planned request lands as a file with its provenance,
// recordings.json and SOURCES.md agree afterwards, no credential or real account id is written, calls
// are spaced as planned; limits, missing credentials, an unreachable or logged-out gateway and a refused
// token end as they should. The real corpus is never touched.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { readRecordings, renderTable, tableOf, writeRecordings } from '../../scripts/record/corpus.js';
import { PLAN, type Provider } from '../../scripts/record/plan.js';
import { record, type RecordDeps } from '../../scripts/record/run.js';
import { credentialFindings } from '../../scripts/record/scrub.js';
import { SANDBOX_CREDENTIALS, type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';
import { RECORDED_ROOT } from '../helpers/recorded.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TODAY = '2031-05-06';
/** Every variable the recorder reads, empty, so a developer's .env or shell never leaks into a test. */
const BLANK_ENV = {
  ALPHA_VANTAGE_API_KEY: '',
  ALPHA_VANTAGE_URL: '',
  MASSIVE_API_KEY: '',
  MASSIVE_URL: '',
  YAHOO_URL: '',
  IBKR_GATEWAY_URL: '',
  IBKR_TLS_VERIFY: '',
  TASTYTRADE_URL: '',
  TASTYTRADE_CLIENT_SECRET: '',
  TASTYTRADE_REFRESH_TOKEN: '',
};

function sandboxEnv(sandbox: Sandbox): Record<string, string> {
  return {
    ...BLANK_ENV,
    ALPHA_VANTAGE_URL: `${sandbox.alphaVantage.origin}/query`,
    ALPHA_VANTAGE_API_KEY: SANDBOX_CREDENTIALS.alphaVantageKey,
    MASSIVE_URL: sandbox.massive.origin,
    MASSIVE_API_KEY: SANDBOX_CREDENTIALS.massiveKey,
    YAHOO_URL: sandbox.yahoo.origin,
    IBKR_GATEWAY_URL: sandbox.ibkr.baseUrl,
    IBKR_TLS_VERIFY: 'false',
    TASTYTRADE_URL: sandbox.tastytrade.origin,
    TASTYTRADE_CLIENT_SECRET: SANDBOX_CREDENTIALS.tastytradeClientSecret,
    TASTYTRADE_REFRESH_TOKEN: SANDBOX_CREDENTIALS.tastytradeRefreshToken,
  };
}

async function sandboxFor(
  t: TestContext,
  // A premium key: the plan records MACD, a premium function (a free key's notice has a test of its own).
  options: SandboxOptions = { alphaVantage: { callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0, plan: 'premium' } },
): Promise<Sandbox> {
  const sandbox = await startSandbox(options);
  t.after(() => sandbox.close());
  return sandbox;
}

/** A temporary copy of the corpus, and an empty working directory (no .env). */
function workspace(t: TestContext): { out: string; cwd: string } {
  const dir = mkdtempSync(join(tmpdir(), 'record-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'recorded');
  cpSync(RECORDED_ROOT, out, { recursive: true });
  return { out, cwd: dir };
}

/** A clock that moves only when the recorder sleeps: the spacing is checked without waiting for it. */
function fakeTime(env: Record<string, string>, cwd: string): Partial<RecordDeps> & { lines: string[]; errors: string[] } {
  let clock = 1_000_000;
  const lines: string[] = [];
  const errors: string[] = [];
  return {
    env: { ...env },
    cwd,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    today: () => TODAY,
    stdout: (line) => lines.push(line),
    stderr: (line) => errors.push(line),
    lines,
    errors,
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

function snapshotOf(dir: string): Map<string, string> {
  return new Map(filesUnder(dir).map((f) => [f, readFileSync(f, 'latin1')]));
}

test('the whole plan against the simulators: a file per request, consistent recordings.json and SOURCES.md, nothing secret written', async (t) => {
  const sandbox = await sandboxFor(t);
  const { out, cwd } = workspace(t);
  const realCorpus = snapshotOf(RECORDED_ROOT);
  const deps = fakeTime(sandboxEnv(sandbox), cwd);

  const result = await record(['--out', out], deps);
  assert.deepEqual(result.failed, [], deps.lines.join('\n'));
  assert.deepEqual(result.skipped, []);
  assert.equal(result.exitCode, 0, deps.errors.join('\n'));

  for (const plan of PLAN) {
    const dir = join(out, plan.provider);
    const recordings = readRecordings(dir);
    for (const req of plan.requests) {
      const entry = recordings.find((r) => r.name === req.name);
      assert.ok(entry !== undefined, `${plan.provider}/${req.name} recorded`);
      assert.equal(entry.status, req.status ?? 200, `${req.name}: status`);
      assert.equal(entry.origin, 'captured');
      assert.equal(entry.date, TODAY);
      assert.equal(
        entry.source,
        `npm run record (${new URL(sandboxEnv(sandbox)[plan.provider === 'ibkr' ? 'IBKR_GATEWAY_URL' : plan.provider === 'alpha-vantage' ? 'ALPHA_VANTAGE_URL' : plan.provider === 'yahoo' ? 'YAHOO_URL' : plan.provider === 'massive' ? 'MASSIVE_URL' : 'TASTYTRADE_URL'] as string).host})`,
      );
      assert.ok(!('apikey' in (entry.request.query ?? {})), `${req.name}: no key in the recorded request`);
      const body = readFileSync(join(dir, entry.body), 'utf8');
      assert.ok(body.length > 0, `${req.name}: body written`);
      assert.equal(
        tableOf(readFileSync(join(dir, 'SOURCES.md'), 'utf8')),
        renderTable(recordings),
        `${plan.provider}: SOURCES.md table follows recordings.json`,
      );
    }
    // Every file listed, every listed file there.
    const files = readdirSync(dir)
      .filter((f) => f !== 'recordings.json' && f !== 'SOURCES.md')
      .sort();
    assert.deepEqual(files, recordings.map((r) => r.body).sort(), `${plan.provider}: files and recordings.json agree`);
  }

  // A refreshed recording keeps its name, place, body file and notes; a new one is appended.
  const original = readRecordings(join(RECORDED_ROOT, 'alpha-vantage'));
  const refreshed = readRecordings(join(out, 'alpha-vantage'));
  const index = original.findIndex((r) => r.name === 'global-quote-msft');
  assert.equal(refreshed[index]?.name, 'global-quote-msft');
  assert.equal(refreshed[index]?.notes, original[index]?.notes);
  assert.equal(refreshed[index]?.edits, 'none');
  assert.deepEqual(
    refreshed.slice(0, original.length).map((r) => r.name),
    original.map((r) => r.name),
  );
  assert.equal(refreshed.at(-1)?.name, 'time-series-intraday-msft-5min');

  // Scrubbed: no sandbox credential, no access token, no real account id; placeholders in their place.
  const known = [...Object.values(SANDBOX_CREDENTIALS), sandbox.tastytrade.lastToken as string, 'DU7654321'];
  for (const file of filesUnder(out)) assert.deepEqual(credentialFindings(readFileSync(file, 'latin1'), known), [], file);
  const ibkr = readRecordings(join(out, 'ibkr'));
  assert.equal(ibkr.find((r) => r.name === 'portfolio-positions-page-0')?.request.path, '/portfolio/DU1234567/positions/0');
  const accounts = readFileSync(join(out, 'ibkr', 'portfolio-accounts.json'), 'utf8');
  assert.match(accounts, /"DU1234568"/, 'the second account has the second placeholder');
  assert.match(accounts, /"accountTitle":"REDACTED"/);
  const tickle = readFileSync(join(out, 'ibkr', 'tickle.json'), 'utf8');
  assert.match(tickle, /"userId":12345678/);
  assert.match(tickle, /"MAC":"00:00:00:00:00:00"/);
  assert.match(ibkr.find((r) => r.name === 'tickle')?.edits ?? '', /^Scrubbed by npm run record: /);
  const tastytrade = readRecordings(join(out, 'tastytrade'));
  const token = tastytrade.find((r) => r.name === 'oauth-token');
  assert.equal(token?.edits, 'Scrubbed by npm run record: the OAuth access token -> REDACTED.');
  assert.deepEqual(token?.request.requestBody, { grant_type: 'refresh_token', refresh_token: 'REDACTED', client_secret: 'REDACTED' });
  assert.match(
    readFileSync(join(out, 'tastytrade', 'oauth-token.json'), 'utf8'),
    /^\{"access_token":"REDACTED","expires_in":900,"token_type":"Bearer"\}$/,
  );
  assert.equal(tastytrade.find((r) => r.name === 'positions-include-marks')?.request.path, '/accounts/5WT00001/positions');
  // The populated snapshot has fields, the first one only conids.
  const first = JSON.parse(readFileSync(join(out, 'ibkr', 'snapshot-aapl-ibm-first-call.json'), 'utf8')) as Record<string, unknown>[];
  const populated = JSON.parse(readFileSync(join(out, 'ibkr', 'snapshot-aapl-ibm-populated.json'), 'utf8')) as Record<string, unknown>[];
  assert.deepEqual(
    first.map((row) => Object.keys(row).sort()),
    [
      ['conid', 'conidEx'],
      ['conid', 'conidEx'],
    ],
  );
  assert.ok(populated.every((row) => '31' in row));
  // Massive: the next_url page, and bearer auth never in a URL.
  assert.ok(!readFileSync(join(out, 'massive', 'dividends-all-tickers-limit-10.json'), 'utf8').includes(SANDBOX_CREDENTIALS.massiveKey));

  // Spacing, per provider, between the starts of two calls.
  for (const plan of PLAN) {
    const times = result.calls.filter((c) => c.provider === plan.provider).map((c) => c.at);
    for (let i = 1; i < times.length; i += 1)
      assert.ok((times[i] as number) - (times[i - 1] as number) >= plan.spacingMs, `${plan.provider}: call ${i} too soon`);
  }
  assert.ok(result.calls.filter((c) => c.provider === 'alpha-vantage').length <= 20);

  assert.deepEqual(snapshotOf(RECORDED_ROOT), realCorpus, 'the real corpus is untouched');
});

test('every planned name is kebab-case and unique per provider; Alpha Vantage stays within 20 calls', () => {
  for (const plan of PLAN) {
    const names = plan.requests.map((r) => r.name);
    assert.equal(new Set(names).size, names.length, plan.provider);
    for (const name of names) assert.match(name, /^[a-z0-9]+(?:-[a-z0-9]+)*$/);
  }
  const av = PLAN.find((p) => p.provider === 'alpha-vantage');
  assert.ok(av !== undefined && av.requests.length <= 20 && (av.maxCalls ?? Infinity) <= 20 && av.spacingMs >= 1_500);
  assert.ok((PLAN.find((p) => p.provider === 'yahoo')?.spacingMs ?? 0) >= 1_000);
  assert.ok((PLAN.find((p) => p.provider === 'massive')?.spacingMs ?? 0) >= 12_000);
  assert.ok((PLAN.find((p) => p.provider === 'ibkr')?.spacingMs ?? 0) >= 200);
});

test('a limit notice from Alpha Vantage is recorded under a name of its own and ends the calls to it', async (t) => {
  const sandbox = await sandboxFor(t, { alphaVantage: { callsPerMinute: 0, callsPerDay: 3, burstPerSecond: 0 } });
  const { out, cwd } = workspace(t);
  const deps = fakeTime(sandboxEnv(sandbox), cwd);
  const result = await record(['--only', 'alpha-vantage', '--out', out], deps);
  assert.equal(result.exitCode, 0, deps.errors.join('\n'));
  assert.equal(result.calls.length, 4, 'three answered, the fourth refused, no fifth');
  const recordings = readRecordings(join(out, 'alpha-vantage'));
  const notice = recordings.find((r) => r.name === `limit-notice-${TODAY}`);
  assert.ok(notice !== undefined);
  assert.equal(notice.request.query?.function, 'MACD', 'the request that got it');
  assert.match(readFileSync(join(out, 'alpha-vantage', notice.body), 'utf8'), /25 requests per day|3 requests per day/);
  // The recording the refused request would have refreshed is left as it was.
  assert.equal(
    recordings.find((r) => r.name === 'macd-ibm-daily')?.source,
    readRecordings(join(RECORDED_ROOT, 'alpha-vantage')).find((r) => r.name === 'macd-ibm-daily')?.source,
  );
  assert.ok(deps.lines.some((l) => l.includes('stopped:') && l.includes('limit notice')));
});

test("a free key's premium notice is recorded under a name of its own; the calls go on", async (t) => {
  const sandbox = await sandboxFor(t, { alphaVantage: { callsPerMinute: 0, callsPerDay: 0, burstPerSecond: 0, plan: 'free' } });
  const { out, cwd } = workspace(t);
  const deps = fakeTime(sandboxEnv(sandbox), cwd);
  const result = await record(['--only', 'alpha-vantage', '--out', out], deps);
  assert.equal(result.exitCode, 0, deps.errors.join('\n'));
  const recordings = readRecordings(join(out, 'alpha-vantage'));
  const notice = recordings.find((r) => r.name === `premium-endpoint-notice-macd-${TODAY}`);
  assert.ok(notice !== undefined, recordings.map((r) => r.name).join(', '));
  assert.match(readFileSync(join(out, 'alpha-vantage', notice.body), 'utf8'), /This is a premium endpoint/);
  const planned = PLAN.find((p) => p.provider === 'alpha-vantage')?.requests ?? [];
  assert.equal(result.calls.length, planned.length, 'no call left out after the notice');
});

test('providers without credentials are skipped with one line each; nothing recorded is a failure', async (t) => {
  const { out, cwd } = workspace(t);
  const deps = fakeTime(BLANK_ENV, cwd);
  const result = await record(['--only', 'alpha-vantage,massive', '--only', 'tastytrade', '--out', out], deps);
  assert.equal(result.exitCode, 1);
  assert.deepEqual(result.calls, []);
  assert.deepEqual(
    result.skipped.map((s) => `${s.provider}: ${s.reason}`),
    [
      'alpha-vantage: ALPHA_VANTAGE_API_KEY is not set',
      'massive: MASSIVE_API_KEY is not set',
      'tastytrade: TASTYTRADE_CLIENT_SECRET and TASTYTRADE_REFRESH_TOKEN are not set',
    ],
  );
  assert.equal(deps.lines.filter((l) => l.includes('skipped:')).length, 3);
  assert.ok(deps.errors.some((l) => l.includes('nothing was recorded')));
});

test('an IBKR gateway that is not running, or running without a login, is skipped with the reason', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as { port: number };
      server.close(() => resolve(p));
    });
  });
  const { out, cwd } = workspace(t);
  const down = fakeTime({ ...BLANK_ENV, IBKR_GATEWAY_URL: `https://127.0.0.1:${port}/v1/api` }, cwd);
  const result = await record(['--only', 'ibkr', '--out', out], down);
  assert.equal(result.exitCode, 1);
  assert.equal(result.skipped.length, 1);
  assert.match(result.skipped[0]?.reason ?? '', /^unreachable at https:\/\/127\.0\.0\.1:\d+\/v1\/api: connection refused/);

  const sandbox = await sandboxFor(t);
  sandbox.ibkr.setSession('logged_out');
  const loggedOut = fakeTime(sandboxEnv(sandbox), cwd);
  const second = await record(['--only', 'ibkr', '--out', out], loggedOut);
  assert.match(second.skipped[0]?.reason ?? '', /nobody is logged in/);
  assert.equal(second.calls.length, 1);
  assert.equal(second.written.length, 0);
});

test('a refused Tastytrade token is recorded as such and fails the run with a clear reason', async (t) => {
  const sandbox = await sandboxFor(t);
  const { out, cwd } = workspace(t);
  const deps = fakeTime({ ...sandboxEnv(sandbox), TASTYTRADE_REFRESH_TOKEN: 'not-the-right-refresh-token' }, cwd);
  const result = await record(['--only', 'tastytrade', '--out', out], deps);
  assert.equal(result.exitCode, 1);
  assert.equal(result.calls.length, 1);
  assert.match(result.failed[0]?.reason ?? '', /oauth-token answered HTTP 401 .*TASTYTRADE_CLIENT_SECRET and TASTYTRADE_REFRESH_TOKEN/);
  const refused = readRecordings(join(out, 'tastytrade')).find((r) => r.name === `oauth-token-status-401-${TODAY}`);
  assert.ok(refused !== undefined);
  assert.deepEqual(refused.request.requestBody, { grant_type: 'refresh_token', refresh_token: 'REDACTED', client_secret: 'REDACTED' });
  for (const file of filesUnder(join(out, 'tastytrade')))
    assert.ok(!readFileSync(file, 'utf8').includes('not-the-right-refresh-token'), file);
});

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'record.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the command: --dry-run prints the plan and calls nothing', async () => {
  const { code, stdout, stderr } = await run(['--dry-run'], { ...BLANK_ENV, IBKR_GATEWAY_URL: 'https://127.0.0.1:9/v1/api' });
  assert.equal(code, 0, stderr);
  for (const plan of PLAN) {
    assert.ok(stdout.includes(`${plan.provider}: ${plan.requests.length} requests`), plan.provider);
    for (const req of plan.requests) assert.ok(stdout.includes(`  ${req.name} `), req.name);
  }
  assert.match(stdout, /alpha-vantage: .*\n {2}would be skipped: ALPHA_VANTAGE_API_KEY is not set/);
  assert.match(
    stdout,
    /POST \/oauth\/token \(body: \{"grant_type":"refresh_token","refresh_token":"REDACTED","client_secret":"REDACTED"\}\)/,
  );
});

test('the command: a bad flag or provider exits 2 with the reason and the usage, no stack trace', async () => {
  const bad = await run(['--only', 'bloomberg'], BLANK_ENV);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown provider "bloomberg" \(known: alpha-vantage, yahoo, massive, ibkr, tastytrade\)/);
  assert.match(bad.stderr, /Usage: npm run record/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /);
  const flag = await run(['--frobnicate'], BLANK_ENV);
  assert.equal(flag.code, 2);
  assert.doesNotMatch(flag.stderr, /\n\s+at /);
  const missing = await run(['--out', '/nonexistent/corpus'], BLANK_ENV);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /the output directory \/nonexistent\/corpus does not exist/);
});

test('the command: --render-tables re-renders each SOURCES.md table from its recordings.json, prose kept', async (t) => {
  const { out } = workspace(t);
  const dir = join(out, 'massive');
  const recordings = readRecordings(dir);
  (recordings[0] as { notes?: string }).notes = 'A note edited by hand | with a pipe.';
  writeRecordings(dir, recordings);
  const before = readFileSync(join(dir, 'SOURCES.md'), 'utf8');
  const { code, stderr } = await run(['--render-tables', '--only', 'massive', '--out', out], BLANK_ENV);
  assert.equal(code, 0, stderr);
  const after = readFileSync(join(dir, 'SOURCES.md'), 'utf8');
  assert.equal(tableOf(after), renderTable(recordings));
  assert.match(after, /A note edited by hand \\\| with a pipe\. \|/);
  assert.equal(after.slice(0, after.indexOf('| name |')), before.slice(0, before.indexOf('| name |')), 'the prose above is kept');
  assert.equal(after.slice(after.indexOf('<!-- end of')), before.slice(before.indexOf('<!-- end of')), 'the prose below is kept');
});

test('the command end to end: Tastytrade against its simulator, with the real pacing', async (t) => {
  const sandbox = await sandboxFor(t);
  const { out } = workspace(t);
  const { code, stdout, stderr } = await run(['--only', 'tastytrade', '--out', out], sandboxEnv(sandbox));
  assert.equal(code, 0, stderr);
  const names: Provider[] = ['tastytrade'];
  for (const provider of names) {
    const plan = PLAN.find((p) => p.provider === provider);
    for (const req of plan?.requests ?? []) assert.match(stdout, new RegExp(`\\[tastytrade\\] ${req.name}: HTTP 200`));
  }
  assert.match(stdout, /4 recordings written under /);
  assert.match(stdout, /git diff test\/fixtures\/recorded/);
  for (const file of filesUnder(join(out, 'tastytrade'))) {
    assert.deepEqual(
      credentialFindings(readFileSync(file, 'latin1'), [...Object.values(SANDBOX_CREDENTIALS), sandbox.tastytrade.lastToken as string]),
      [],
      file,
    );
  }
});
