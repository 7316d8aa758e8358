// `npm run record`: performs the plan (plan.ts) against every configured provider, scrubs each answer
// (scrub.ts) and writes it into the corpus with its provenance (corpus.ts). Base URLs and credentials
// come from the environment (and .env) exactly as the service reads them, so pointing the URLs at the
// built-in simulators runs it end to end without network. Providers run side by side, each one's calls
// spaced as its limits ask; expected problems end in one line each and an exit code, never a stack.
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Agent, type Dispatcher, request } from 'undici';
import { type Config, ConfigError, loadConfig } from '../../src/core/config.js';
import { loadEnvFile } from '../../src/core/env-file.js';
import {
  CorpusError,
  DEFAULT_CORPUS_DIR,
  describeRequest,
  readRecordings,
  type RecordedRequest,
  type Recording,
  upsertRecording,
  writeRecordings,
  writeSourcesTable,
} from './corpus.js';
import { type Answer, PLAN, type PlannedRequest, type Provider, type ProviderPlan, PROVIDERS } from './plan.js';
import { type Credential, credentialFindings, describeEdits, scrub } from './scrub.js';

const USAGE = `Usage: npm run record -- [--only <provider>] [--dry-run | --render-tables] [--out <dir>]

Refreshes the recorded corpus (test/fixtures/recorded/<provider>/) from the real providers: a fixed list
of requests per provider, each answer scrubbed of keys, tokens and account details and written with its
provenance. Needs real keys and network; never run in CI.

  --only <provider>  only these providers (repeat or comma-separate): ${PROVIDERS.join(', ')}
  --dry-run          print the plan and what would be skipped; call nothing, write nothing
  --render-tables    only re-render each SOURCES.md table from its recordings.json (after editing it by hand)
  --out <dir>        the corpus directory to write into (default: test/fixtures/recorded)
  --help             this text

Credentials and base URLs come from the environment (and .env) as the service reads them:
ALPHA_VANTAGE_API_KEY/_URL, MASSIVE_API_KEY/_URL, YAHOO_URL, IBKR_GATEWAY_URL/IBKR_TLS_VERIFY,
TASTYTRADE_URL/_CLIENT_SECRET/_REFRESH_TOKEN.`;

const TIMEOUT_MS = 30_000;
/** Values read from answers that are secrets themselves (how an edit names them): scrubbed from every body. */
const SECRET_VARS = new Map([['accessToken', 'the OAuth access token']]);

export interface RecordDeps {
  env: Record<string, string | undefined>;
  /** Where .env is read from. */
  cwd: string;
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** YYYY-MM-DD. */
  today: () => string;
}

export interface RecordResult {
  exitCode: number;
  /** Every call made, in order, with the time it started. */
  calls: { provider: Provider; name: string; at: number }[];
  written: { provider: Provider; name: string; file: string }[];
  skipped: { provider: Provider; reason: string }[];
  failed: { provider: Provider; reason: string }[];
}

interface Target {
  plan: ProviderPlan;
  /** Base URL; for Alpha Vantage the whole endpoint (ALPHA_VANTAGE_URL is the /query URL itself). */
  base: string;
  host: string;
  vars: Map<string, string>;
  /** Why it is not called, when it is not. */
  skip?: string;
  dispatcher?: Dispatcher;
}

interface Received extends Answer {
  contentType: string | undefined;
  /** The body's bytes as a latin1 string: every byte one character, so writing it back is byte for byte. */
  bytes: string;
  decoded?: string;
}

class UsageError extends Error {}
/** An expected problem: its message is the whole story. */
class RecordError extends Error {}

const OPTIONS = {
  only: { type: 'string', multiple: true },
  'dry-run': { type: 'boolean' },
  'render-tables': { type: 'boolean' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: string[]): { only: Provider[]; dryRun: boolean; renderTables: boolean; out: string | undefined; help: boolean } {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const only = (values.only ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = only.filter((p) => !(PROVIDERS as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw new UsageError(`unknown provider ${unknown.map((u) => `"${u}"`).join(', ')} (known: ${PROVIDERS.join(', ')})`);
  if (values['dry-run'] && values['render-tables']) throw new UsageError('--dry-run and --render-tables do not go together');
  return {
    only: only as Provider[],
    dryRun: values['dry-run'] === true,
    renderTables: values['render-tables'] === true,
    out: values.out,
    help: values.help === true,
  };
}

function defaults(): RecordDeps {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    now: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    today: () => new Date().toISOString().slice(0, 10),
  };
}

function targetsOf(config: Config, env: Record<string, string | undefined>): Target[] {
  const bases: Record<Provider, string> = {
    'alpha-vantage': config.alphaVantage.url,
    yahoo: config.overview.url,
    massive: config.massive.url,
    ibkr: config.broker.ibkr.url,
    tastytrade: config.broker.tastytrade.url,
  };
  const secrets: Record<string, string | undefined> = {
    alphaVantageKey: config.alphaVantage.apiKey,
    massiveKey: config.massive.apiKey,
    tastytradeClientSecret: config.broker.tastytrade.clientSecret,
    tastytradeRefreshToken: config.broker.tastytrade.refreshToken,
  };
  return PLAN.map((plan) => {
    const vars = new Map(Object.entries(secrets).filter((e): e is [string, string] => e[1] !== undefined));
    const missing = plan.needs.filter((name) => (env[name] ?? '').trim() === '');
    const base = bases[plan.provider];
    const target: Target = { plan, base, host: new URL(base).host, vars };
    if (missing.length > 0) target.skip = `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set`;
    if (plan.provider === 'ibkr' && !config.broker.ibkr.tlsVerify)
      target.dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    return target;
  });
}

/** Every configured credential, for scrubbing (and for the final check that none is left). */
function credentialsOf(config: Config): Credential[] {
  const list: [string, string | undefined][] = [
    ['the Alpha Vantage key (ALPHA_VANTAGE_API_KEY)', config.alphaVantage.apiKey],
    ['the Massive key (MASSIVE_API_KEY)', config.massive.apiKey],
    ['the Tastytrade client secret (TASTYTRADE_CLIENT_SECRET)', config.broker.tastytrade.clientSecret],
    ['the Tastytrade refresh token (TASTYTRADE_REFRESH_TOKEN)', config.broker.tastytrade.refreshToken],
  ];
  return list.filter((e): e is [string, string] => e[1] !== undefined).map(([label, value]) => ({ label, value }));
}

const TEMPLATE = /\{(\w+)\}/g;

function varsIn(request: PlannedRequest, plan: ProviderPlan): string[] {
  const texts = [
    request.path,
    ...Object.values(request.body ?? {}),
    ...Object.values(plan.authQuery ?? {}),
    ...(request.anonymous ? [] : Object.values(plan.authHeaders ?? {})),
  ];
  return [...new Set(texts.flatMap((t) => [...t.matchAll(TEMPLATE)].map((m) => m[1] as string)))];
}

function fill(text: string, vars: ReadonlyMap<string, string>, encode = false): string {
  return text.replace(TEMPLATE, (whole, name: string) => {
    const value = vars.get(name);
    if (value === undefined) return whole;
    return encode ? encodeURIComponent(value) : value;
  });
}

/** Query values encoded, commas kept (IBKR's conids and fields, Tastytrade's symbol lists are comma lists). */
function queryString(query: Record<string, string>): string {
  return Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replace(/%2C/gi, ',')}`)
    .join('&');
}

function urlOf(target: Target, req: PlannedRequest): string {
  const query = {
    ...req.query,
    ...Object.fromEntries(Object.entries(target.plan.authQuery ?? {}).map(([k, v]) => [k, fill(v, target.vars)])),
  };
  const qs = queryString(query);
  const base =
    target.plan.provider === 'alpha-vantage' ? target.base : `${target.base.replace(/\/+$/, '')}${fill(req.path, target.vars, true)}`;
  return qs === '' ? base : `${base}${base.includes('?') ? '&' : '?'}${qs}`;
}

function transportProblem(error: unknown): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || code === 'UND_ERR_CONNECT_TIMEOUT')
    return `no answer within ${TIMEOUT_MS / 1000} s`;
  if (code === 'ECONNREFUSED') return 'connection refused (is it running?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found (no network?)';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was closed';
  if (code !== undefined && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))
    return `its TLS certificate is not trusted (${code}; for the IBKR gateway's self-signed one, set IBKR_TLS_VERIFY=false)`;
  return e.cause?.message ?? e.message ?? String(error);
}

async function send(target: Target, req: PlannedRequest): Promise<Received> {
  const { plan, vars } = target;
  const headers: Record<string, string> = { accept: 'application/json', ...plan.headers };
  if (!req.anonymous) for (const [k, v] of Object.entries(plan.authHeaders ?? {})) headers[k] = fill(v, vars);
  let body: string | undefined;
  if (req.body !== undefined) {
    body = JSON.stringify(Object.fromEntries(Object.entries(req.body).map(([k, v]) => [k, fill(v, vars)])));
    headers['content-type'] = 'application/json';
  }
  const res = await request(urlOf(target, req), {
    method: req.method,
    headers,
    body,
    dispatcher: target.dispatcher,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  let raw = Buffer.from(await res.body.arrayBuffer());
  const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
  let decoded: string | undefined;
  if (encoding === 'gzip' || encoding === 'x-gzip') raw = gunzipSync(raw);
  else if (encoding === 'deflate') raw = inflateSync(raw);
  else if (encoding === 'br') raw = brotliDecompressSync(raw);
  if (encoding !== '' && encoding !== 'identity') decoded = encoding;
  const contentType = res.headers['content-type'];
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    json = undefined;
  }
  return {
    status: res.statusCode,
    json,
    contentType: Array.isArray(contentType) ? contentType.join(', ') : contentType,
    bytes: raw.toString('latin1'),
    decoded,
  };
}

interface RunContext {
  deps: RecordDeps;
  out: string;
  date: string;
  credentials: Credential[];
  aliases: Map<string, string>;
  result: RecordResult;
}

function log(ctx: RunContext, provider: Provider, line: string): void {
  ctx.deps.stdout(`[${provider}] ${line}`);
}

function seconds(ms: number): string {
  return ms >= 1_000 ? `${ms / 1_000} s` : `${ms} ms`;
}

/** The credentials to scrub now: the configured ones and any secret learned from an answer (an access token). */
function scrubCredentials(ctx: RunContext, target: Target): Credential[] {
  const learned = [...target.vars].filter(([k]) => SECRET_VARS.has(k)).map(([k, v]) => ({ label: SECRET_VARS.get(k) as string, value: v }));
  return [...ctx.credentials, ...learned];
}

function write(ctx: RunContext, target: Target, req: PlannedRequest, name: string, answer: Received, notes: string): void {
  const { plan } = target;
  const credentials = scrubCredentials(ctx, target);
  const scrubbed = scrub(answer.bytes, { provider: plan.provider, credentials, aliases: ctx.aliases });
  ctx.aliases = scrubbed.aliases;
  const clean = (text: string) => {
    const s = scrub(text, { provider: plan.provider, credentials, aliases: ctx.aliases });
    ctx.aliases = s.aliases;
    return s;
  };
  const path = clean(fill(req.path, target.vars));
  const request: RecordedRequest = { method: req.method, path: path.text, query: { ...req.query } };
  if (req.body !== undefined)
    request.requestBody = Object.fromEntries(Object.entries(req.body).map(([k, v]) => [k, clean(fill(v, target.vars)).text]));
  const contentType = answer.contentType === undefined ? undefined : clean(answer.contentType).text;
  const edits = [...scrubbed.edits, ...path.edits.map((e) => `in the request path, ${e}`)];
  if (answer.decoded !== undefined) edits.unshift(`decompressed (content-encoding ${answer.decoded})`);

  const dir = join(ctx.out, plan.provider);
  mkdirSync(dir, { recursive: true });
  const recordings = readRecordings(dir);
  const extension = answer.json === undefined ? 'txt' : 'json';
  const entry: Recording = {
    name,
    body: `${name}.${extension}`,
    request,
    status: answer.status,
    ...(contentType === undefined ? {} : { contentType }),
    origin: 'captured',
    source: `npm run record (${target.host})`,
    date: ctx.date,
    edits: describeEdits(edits),
    notes,
  };
  const { recordings: next, existed, body } = upsertRecording(recordings, entry);

  // The last word: nothing that still looks like a credential or a real account id is written.
  const placeholders = new Set(ctx.aliases.values());
  const realIds = [...ctx.aliases.keys()].filter((real) => !placeholders.has(real));
  const known = [...credentials.map((c) => c.value), ...realIds];
  const findings = credentialFindings(`${scrubbed.text}\n${JSON.stringify(next.find((r) => r.name === name))}`, known);
  if (findings.length > 0)
    throw new RecordError(`refusing to write ${name}: after scrubbing it still contains ${[...new Set(findings)].join(', ')}`);

  writeFileSync(join(dir, body), Buffer.from(scrubbed.text, 'latin1'));
  writeRecordings(dir, next);
  writeSourcesTable(dir, plan.label, next);
  ctx.result.written.push({ provider: plan.provider, name, file: join(dir, body) });
  const size = Buffer.byteLength(scrubbed.text, 'latin1');
  const what = [...new Set(edits.map((e) => e.replace(/^in the request path, /, '').replace(/ -> .*$/, '')))];
  log(
    ctx,
    plan.provider,
    `${name}: HTTP ${answer.status}, ${size} bytes -> ${body} (${existed ? 'refreshed' : 'new'}${what.length > 0 ? `; scrubbed: ${what.join(', ')}` : ''})`,
  );
}

async function runProvider(ctx: RunContext, target: Target): Promise<void> {
  const { plan } = target;
  const { deps } = ctx;
  const provider = plan.provider;
  let lastStart = -Infinity;
  let calls = 0;
  const skip = (reason: string) => {
    ctx.result.skipped.push({ provider, reason });
    log(ctx, provider, `skipped: ${reason}`);
  };
  const fail = (reason: string) => {
    ctx.result.failed.push({ provider, reason });
    log(ctx, provider, `FAILED: ${reason}`);
  };
  log(
    ctx,
    provider,
    `${plan.requests.length} requests to ${target.host}, at least ${seconds(plan.spacingMs)} apart (${plan.spacingReason})`,
  );

  for (const req of plan.requests) {
    const missing = varsIn(req, plan).filter((v) => !target.vars.has(v));
    if (missing.length > 0) {
      log(ctx, provider, `${req.name}: not recorded: no ${missing.join(', ')} from an earlier answer`);
      continue;
    }
    let answer: Received | undefined;
    const attempts = req.until?.attempts ?? 1;
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      if (plan.maxCalls !== undefined && calls >= plan.maxCalls) {
        fail(`stopped at ${plan.maxCalls} calls, the most one run may make`);
        return;
      }
      const gap = Math.max(plan.spacingMs, req.until?.waitMs ?? 0);
      const wait = lastStart + gap - deps.now();
      if (wait > 0) await deps.sleep(wait);
      lastStart = deps.now();
      calls += 1;
      ctx.result.calls.push({ provider, name: req.name, at: lastStart });
      try {
        answer = await send(target, req);
      } catch (error) {
        const problem = transportProblem(error);
        if (calls === 1) skip(`unreachable at ${target.base}: ${problem}`);
        else fail(`${req.name}: ${problem}`);
        return;
      }
      if (req.until === undefined || req.until.done(answer) || answer.status !== (req.status ?? 200)) break;
    }
    if (answer === undefined) return;

    const gated = req.gate?.(answer);
    if (gated !== undefined) {
      skip(gated);
      return;
    }
    const expected = req.status ?? 200;
    const notice = plan.notice?.(answer, req, ctx.date);
    let name = req.name;
    let notes = req.notes;
    let stop: string | undefined;
    let failure: string | undefined;
    if (notice !== undefined) {
      ({ name, notes } = notice);
      if (notice.stop) stop = `${plan.label} answered a limit notice (recorded as ${name}); no more calls to it in this run`;
    } else if (answer.status === 429) {
      name = `too-many-requests-429-${ctx.date}`;
      notes = `HTTP 429 answered to ${req.name}'s request; npm run record stopped calling ${plan.label}, so the recordings after it in the list were not refreshed.`;
      stop = `${plan.label} answered 429 (recorded as ${name}); no more calls to it in this run`;
    } else if (answer.status !== expected) {
      name = `${req.name}-status-${answer.status}-${ctx.date}`;
      notes = `HTTP ${answer.status} answered to ${req.name}'s request (${expected} expected); the recording ${req.name} was left as it was.`;
      if (req.required !== undefined) failure = `${req.name} answered HTTP ${answer.status} (recorded as ${name}): ${req.required}`;
      else log(ctx, provider, `${req.name}: HTTP ${answer.status} where ${expected} was expected: recorded as ${name}`);
    } else if (req.until !== undefined && !req.until.done(answer)) {
      log(ctx, provider, `${req.name}: not recorded: no ${req.until.wanted} after ${attempts} attempts`);
      continue;
    }
    if (name === req.name) {
      for (const [key, read] of Object.entries(req.provides ?? {})) {
        const value = read(answer);
        if (value !== undefined) target.vars.set(key, value);
        else if (req.required !== undefined) failure = `${req.name} gave no ${key}: ${req.required}`;
      }
    }
    write(ctx, target, req, name, answer, notes);
    if (failure !== undefined) {
      fail(failure);
      return;
    }
    if (stop !== undefined) {
      log(ctx, provider, `stopped: ${stop}`);
      return;
    }
  }
}

function printPlan(ctx: { deps: RecordDeps; out: string }, targets: Target[]): void {
  const { stdout } = ctx.deps;
  stdout(`npm run record: the plan (dry run: nothing is called, nothing written)`);
  stdout(`corpus: ${ctx.out}`);
  for (const target of targets) {
    const { plan } = target;
    const existing = new Set(readRecordings(join(ctx.out, plan.provider)).map((r) => r.name));
    stdout('');
    stdout(
      `${plan.provider}: ${plan.requests.length} requests to ${target.base}, at least ${seconds(plan.spacingMs)} apart (${plan.spacingReason})`,
    );
    const cost =
      plan.callsPerDay === undefined ? '' : `; uses ${plan.requests.length} of the ${plan.callsPerDay} calls a day of a free key`;
    const run = plan.needs.length === 0 ? 'would run (no credentials needed), unless unreachable' : 'would run';
    stdout(`  ${target.skip === undefined ? `${run}${cost}` : `would be skipped: ${target.skip}`}`);
    const width = Math.max(...plan.requests.map((r) => r.name.length));
    for (const req of plan.requests) {
      const recorded: RecordedRequest = { method: req.method, path: req.path, query: req.query };
      if (req.body !== undefined)
        recorded.requestBody = Object.fromEntries(Object.entries(req.body).map(([k, v]) => [k, v.replace(TEMPLATE, 'REDACTED')]));
      const extra = req.until === undefined ? '' : ` (asked up to ${req.until.attempts} times until ${req.until.wanted})`;
      stdout(
        `  ${req.name.padEnd(width)}  ${existing.has(req.name) ? 'refresh' : 'new    '}  ${describeRequest(recorded)}${req.status === undefined ? '' : ` -> expects ${req.status}`}${extra}`,
      );
    }
  }
}

/** Runs `npm run record` with `argv` (without node and the script); resolves with the exit code and what happened. */
export async function record(argv: string[], partial: Partial<RecordDeps> = {}): Promise<RecordResult> {
  const deps = { ...defaults(), ...partial };
  const result: RecordResult = { exitCode: 0, calls: [], written: [], skipped: [], failed: [] };
  const targets: Target[] = [];
  try {
    const args = parse(argv);
    if (args.help) {
      deps.stdout(USAGE);
      return result;
    }
    const out = args.out === undefined ? DEFAULT_CORPUS_DIR : resolve(deps.cwd, args.out);
    if (!existsSync(out) || !statSync(out).isDirectory()) throw new RecordError(`the output directory ${out} does not exist`);
    if (args.renderTables) {
      for (const plan of PLAN.filter((p) => args.only.length === 0 || args.only.includes(p.provider))) {
        const dir = join(out, plan.provider);
        if (!existsSync(join(dir, 'recordings.json'))) continue;
        writeSourcesTable(dir, plan.label, readRecordings(dir));
        deps.stdout(`${join(dir, 'SOURCES.md')}: table rendered from recordings.json`);
      }
      return result;
    }
    loadEnvFile(deps.cwd, deps.env as NodeJS.ProcessEnv);
    const config = loadConfig(deps.env);
    targets.push(...targetsOf(config, deps.env).filter((t) => args.only.length === 0 || args.only.includes(t.plan.provider)));
    if (args.dryRun) {
      printPlan({ deps, out }, targets);
      return result;
    }
    const ctx: RunContext = { deps, out, date: deps.today(), credentials: credentialsOf(config), aliases: new Map(), result };
    for (const target of targets) {
      if (target.skip !== undefined) {
        result.skipped.push({ provider: target.plan.provider, reason: target.skip });
        log(ctx, target.plan.provider, `skipped: ${target.skip}`);
      }
    }
    await Promise.all(
      targets
        .filter((t) => t.skip === undefined)
        .map((t) =>
          runProvider(ctx, t).catch((error: unknown) => {
            if (!(error instanceof RecordError || error instanceof CorpusError || isFsError(error))) throw error;
            result.failed.push({ provider: t.plan.provider, reason: error.message });
            log(ctx, t.plan.provider, `FAILED: ${error.message}`);
          }),
        ),
    );
    summarize(deps, out, result);
  } catch (error) {
    if (error instanceof UsageError) {
      deps.stderr(`npm run record: ${error.message}\n\n${USAGE}`);
      result.exitCode = 2;
    } else if (error instanceof ConfigError || error instanceof RecordError || error instanceof CorpusError || isFsError(error)) {
      deps.stderr(`npm run record: ${error.message}`);
      result.exitCode = 1;
    } else {
      throw error;
    }
  } finally {
    await Promise.all(targets.map((t) => (t.dispatcher as Agent | undefined)?.close()));
  }
  return result;
}

function isFsError(error: unknown): error is Error {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    typeof (error as NodeJS.ErrnoException).syscall === 'string'
  );
}

function summarize(deps: RecordDeps, out: string, result: RecordResult): void {
  deps.stdout('');
  deps.stdout(`${result.written.length} recording${result.written.length === 1 ? '' : 's'} written under ${out}.`);
  for (const { provider, reason } of result.failed) deps.stderr(`failed ${provider}: ${reason}`);
  if (result.failed.length > 0) {
    result.exitCode = 1;
  } else if (result.written.length === 0) {
    deps.stderr('npm run record: nothing was recorded');
    result.exitCode = 1;
  }
  if (result.written.length > 0) deps.stdout('Review the changes: git status test/fixtures/recorded && git diff test/fixtures/recorded');
}
