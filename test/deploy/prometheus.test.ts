// deploy/prometheus and deploy/grafana held to the real tools: promtool checks the configuration and the rules and
// runs their unit tests (test/deploy/prometheus/alerts.promtool.yml) and lints a live scrape; then a real
// Prometheus, started here on loopback with the shipped configuration and rules against a running service,
// scrapes it, evaluates every rule and every query of the Grafana dashboard, and fires the budget alert once the
// budget is spent. Needs Debian's `prometheus` (promtool with it; .ci/run installs it).
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { parse, stringify } from 'yaml';
import { startApp } from '../helpers/app.js';
import { tempDir } from '../helpers/config.js';
import { freePort, until } from '../store/redis-topology.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const PROMETHEUS = join(ROOT, 'deploy', 'prometheus');
const RULE_FILES = ['recording.yml', 'alerts.yml'];
const UNIT_TESTS = join(import.meta.dirname, 'prometheus', 'alerts.promtool.yml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'market-data-proxy.json');
const RUNBOOKS = 'docs/how-to/runbooks.md';
const METRICS_TOKEN = 'metrics-token-for-prometheus-0123';

interface AlertRule {
  alert: string;
  expr: string;
  annotations: { summary?: string; runbook_url?: string };
}

function alertRules(): AlertRule[] {
  const { groups } = parse(readFileSync(join(PROMETHEUS, 'alerts.yml'), 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return groups.flatMap((group) => group.rules);
}

/** promtool's exit code and everything it printed; a missing promtool fails with the install hint. */
async function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: ROOT });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    if (failed.code === 'ENOENT') throw new Error('promtool is not installed (apt-get install prometheus; .ci/run does)');
    return { code: Number(failed.code), output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** The shipped configuration and rules in `dir`, with the token file beside them, changed only where `change` says. */
function prometheusDir(dir: string, change: (config: Record<string, any>) => void = () => {}): string {
  for (const file of RULE_FILES) copyFileSync(join(PROMETHEUS, file), join(dir, file));
  const config = parse(readFileSync(join(PROMETHEUS, 'prometheus.yml'), 'utf8')) as Record<string, any>;
  change(config);
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
  writeFileSync(join(dir, 'metrics-token'), `${METRICS_TOKEN}\n`, { mode: 0o600 });
  return join(dir, 'prometheus.yml');
}

test('promtool: the configuration and both rule files check, and every alert has its unit tests, firing and quiet', async (t) => {
  const config = await promtool('check', 'config', prometheusDir(tempDir(t)));
  assert.equal(config.code, 0, config.output);
  const rules = await promtool('check', 'rules', ...RULE_FILES.map((file) => join(PROMETHEUS, file)));
  assert.equal(rules.code, 0, rules.output);
  const unit = await promtool('test', 'rules', UNIT_TESTS);
  assert.equal(unit.code, 0, unit.output);

  const { tests } = parse(readFileSync(UNIT_TESTS, 'utf8')) as {
    tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
  };
  const cases = tests.flatMap((one) => one.alert_rule_test ?? []);
  for (const { alert } of alertRules()) {
    const mine = cases.filter((c) => c.alertname === alert);
    assert.ok(
      mine.some((c) => c.exp_alerts.length > 0),
      `${alert}: no case where it fires`,
    );
    assert.ok(
      mine.some((c) => c.exp_alerts.length === 0),
      `${alert}: no case where it stays quiet`,
    );
  }
});

test("every alert has a summary and a runbook_url at its own heading of the runbooks' page", () => {
  const page = fromMarkdown(readFileSync(join(ROOT, RUNBOOKS), 'utf8'));
  const anchors = new Set(
    page.children
      .filter((node) => node.type === 'heading')
      .map((heading) =>
        heading.children
          .map((child) => ('value' in child ? child.value : ''))
          .join('')
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replaceAll(' ', '-'),
      ),
  );
  for (const { alert, annotations } of alertRules()) {
    assert.ok((annotations.summary ?? '').length > 20, `${alert}: a summary`);
    assert.equal(annotations.runbook_url, `${RUNBOOKS}#${alert.toLowerCase()}`, `${alert}: its runbook`);
    assert.ok(anchors.has(alert.toLowerCase()), `${alert}: no heading "${alert}" in ${RUNBOOKS}`);
  }
});

// prom-client's default gauges nodejs_active_{handles,requests,resources}_total end in _total, which promtool
// reserves for counters. They are kept under their standard names: the Node.js dashboards people use read them.
const KEPT_STANDARD = /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/;

test('promtool check metrics on a live scrape reports nothing on the service own series', async (t) => {
  const { get, scrape, url } = await startApp(t, { env: { METRICS_TOKEN } });
  await get('/api/provider-a/quote?symbol=IBM');
  await fetch(`${url}/api/stream?status=true`, { signal: AbortSignal.timeout(200) }).catch(() => undefined);
  const text = (await scrape({ authorization: `Bearer ${METRICS_TOKEN}` })).text;
  assert.match(text, /^mdp_upstream_circuit_state\{/m);
  const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stdin.end(text);
  await once(child, 'exit');
  const problems = output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => !KEPT_STANDARD.test(line));
  assert.deepEqual(problems, [], output);
});

interface Prometheus {
  api<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

async function startPrometheus(t: Parameters<typeof tempDir>[0], configFile: string, dataDir: string): Promise<Prometheus> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${configFile}`, `--storage.tsdb.path=${dataDir}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  };
  t.after(stop);
  const base = `http://127.0.0.1:${port}`;
  await until('Prometheus to answer', async () => {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
    return (await fetch(`${base}/-/ready`)).ok;
  });
  return {
    async api<T>(path: string): Promise<T> {
      const body = (await (await fetch(base + path)).json()) as { status: string; data: T; error?: string };
      if (body.status !== 'success') throw new Error(`${path}: ${body.error}`);
      return body.data;
    },
    stop,
  };
}

interface RuleGroup {
  name: string;
  lastEvaluation: string;
  rules: { name: string; type: string; health: string; lastError?: string; lastEvaluation: string }[];
}

test('a real Prometheus with the shipped configuration and rules: up, every rule and dashboard query evaluates, the spent budget fires its alert', async (t) => {
  const { get, metricsUrl } = await startApp(t, {
    env: { METRICS_TOKEN, ALPHA_VANTAGE_CALLS_PER_DAY: '3', ALPHA_VANTAGE_MIN_INTERVAL_MS: '0', QUOTE_FALLBACK: 'none' },
  });
  const target = new URL(metricsUrl!).host;
  const dir = tempDir(t);
  const configFile = prometheusDir(dir, (config) => {
    // The test's own pace, and the running service's listener: the rest is the shipped file.
    config.global = { ...config.global, scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' };
    const job = config.scrape_configs.find((c: { job_name: string }) => c.job_name === 'market-data-proxy');
    job.static_configs = [{ targets: [target] }];
  });
  const prometheus = await startPrometheus(t, configFile, join(dir, 'data'));

  const query = (expr: string) =>
    prometheus.api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
      `/api/v1/query?query=${encodeURIComponent(expr)}`,
    );
  await until('the target to be scraped', async () => {
    const { activeTargets } = await prometheus.api<{ activeTargets: { health: string; lastError: string }[] }>('/api/v1/targets');
    return activeTargets.length === 1 && activeTargets[0]!.health === 'up';
  });
  assert.equal((await query('up{job="market-data-proxy"}')).result[0]?.value[1], '1');
  // A broker quote opens the broker's feed, whose ticks the dashboard shows.
  assert.equal((await get('/api/broker/quotes?symbols=AAPL')).status, 200);

  // One call of three: a third of the day spent, and an evaluation of the alerts after it has been recorded.
  assert.equal((await get('/api/provider-a/quote?symbol=IBM')).status, 200);
  const spent = 'mdp:upstream_budget:spent_ratio{upstream="provider-a",window="day"}';
  let recordedAt = 0;
  await until('a third of the budget recorded', async () => {
    const sample = (await query(spent)).result[0]?.value;
    recordedAt = sample?.[0] ?? 0;
    return sample !== undefined && Math.abs(Number(sample[1]) - 1 / 3) < 1e-9;
  });
  const alerts = () => prometheus.api<{ alerts: { labels: Record<string, string>; state: string }[] }>('/api/v1/alerts');
  const groups = () => prometheus.api<{ groups: RuleGroup[] }>('/api/v1/rules').then((data) => data.groups);
  await until('the alerts evaluated after it', async () => {
    const group = (await groups()).find((g) => g.name === 'market-data-proxy-alerts');
    return group !== undefined && Date.parse(group.lastEvaluation) / 1000 > recordedAt;
  });
  assert.deepEqual(
    (await alerts()).alerts.filter((a) => a.labels.alertname === 'MdpUpstreamDayBudgetNearlySpent'),
    [],
    'quiet at a third',
  );

  // The rest of the day's budget: the alert fires at the next evaluations.
  for (const symbol of ['MSFT', 'AAPL']) assert.equal((await get(`/api/provider-a/quote?symbol=${symbol}`)).status, 200);
  await until('the budget alert to fire', async () =>
    (await alerts()).alerts.some(
      (a) => a.labels.alertname === 'MdpUpstreamDayBudgetNearlySpent' && a.labels.upstream === 'provider-a' && a.state === 'firing',
    ),
  );

  const rules = (await groups()).flatMap((group) => group.rules);
  assert.deepEqual(
    rules.filter((rule) => rule.health !== 'ok' || rule.lastEvaluation.startsWith('0001')).map((rule) => `${rule.name}: ${rule.lastError}`),
    [],
    'every rule evaluated without error',
  );
  assert.equal(rules.filter((rule) => rule.type === 'recording').length, 7);

  // Every query of every panel, with Grafana's interval variables as a short dashboard range would set them.
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
  const queries = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
  const empty: string[] = [];
  for (const { panel, expr } of queries) {
    const concrete = expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1h');
    const { result } = await query(concrete);
    if (result.length === 0) empty.push(`${panel}: ${expr}`);
  }
  assert.ok(empty.length <= queries.length / 5, `${empty.length} of ${queries.length} queries without data:\n${empty.join('\n')}`);
});
