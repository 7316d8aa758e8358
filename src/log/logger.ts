// One pino logger for the service. Secrets are removed twice: by field path, and by value from every
// finished line, so a key can never reach a log even through an unexpected error message.
import { tracingChannel } from 'node:diagnostics_channel';
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { BatchedLines } from './batched-lines.js';
import type { Config } from '../core/config.js';
import { proxySecrets } from '../core/proxy-settings.js';
import { FdOutput } from './fd-output.js';

/** @internal */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.apikey',
  '*.apiKey',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.client_secret',
];

/** @internal */
export function secretsOf(config: Config): string[] {
  const { alphaVantage, massive, broker, metrics, proxy } = config;
  return [
    alphaVantage.apiKey,
    massive.apiKey,
    broker.tastytrade.clientSecret,
    broker.tastytrade.refreshToken,
    broker.access.token,
    metrics.token,
    config.mcp.token,
    ...proxySecrets(proxy.https),
    ...proxySecrets(proxy.http),
  ].filter((s): s is string => s !== undefined && s.length >= 4);
}

/** Replaces every occurrence of a secret in a finished line. */
function scrubSecrets(line: string, secrets: readonly string[]): string {
  for (const secret of secrets) if (line.includes(secret)) line = line.split(secret).join('[REDACTED]');
  return line;
}

/**
 * Where the service's lines go: stdout, made readable for a person (`pretty`) or as JSON for a
 * collector. JSON lines are gathered and written in blocks, synchronously (batched-lines.ts): a write per
 * line (even handed to the thread pool, as `sync: false` does) was the largest cost of the request log
 * on a cache hit. Blocks are written every second, on shutdown (server.ts) and, whatever ends the
 * process, on `exit`.
 */
function stdoutDestination(format: Config['logFormat']): DestinationStream {
  if (format === 'pretty') return prettyLines(1);
  const lines = new BatchedLines(new FdOutput(1));
  process.once('exit', () => lines.flushSync());
  return lines;
}

/** pino-pretty, written synchronously: a terminal shows each line as it happens. @internal */
export function prettyLines(destination: number | NodeJS.WritableStream): DestinationStream {
  return pretty({ destination, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' });
}

/** The service's logger; the secret scrub (streamWrite) runs on every line, before any formatting. */
export function createLogger(config: Config, destination: DestinationStream = stdoutDestination(config.logFormat)): Logger {
  const secrets = secretsOf(config);
  return pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      hooks: secrets.length === 0 ? {} : { streamWrite: (line) => scrubSecrets(line, secrets) },
    },
    destination,
  );
}

/**
 * Query parameters whose values are a caller's secret (Alpha Vantage clients send `apikey`; a stream ticket),
 * by name as `callerSecretName` reads it: never written to a log.
 */
const CALLER_SECRETS = new Set(['apikey', 'token', 'ticket']);

/**
 * Each parameter name of a query, and where its value starts. Fastify's router starts the query at the first
 * `?` or `#`, and its parser (fast-querystring) splits it on `&` only; a name after any of the three is
 * looked at, so that a secret hidden in another parameter's value (`?symbol=IBM?apikey=…`) is caught too.
 */
const PARAMETER_NAME = /[?#&]([^?#&=]*)=/g;
/** Whether a URL may name a caller's secret at all: most do not, and are returned as they are at this cost. */
const MAY_NAME_SECRET = /[?#&][^?#&=]*(?:key|token|ticket|[%+])/i;

/**
 * A parameter name as the query parser reads it (`+` a space, percent-escapes decoded; a name whose escapes
 * do not decode is kept as written, as the parser keeps it), in any case, without the spaces, `_` and `-` a
 * client may spell it with (`api_key`, `API-Key`).
 */
function callerSecretName(raw: string): boolean {
  let name = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  if (name.includes('%')) {
    try {
      name = decodeURIComponent(name);
    } catch {
      // Not valid percent-encoding: the parser reads the name as written.
    }
  }
  return CALLER_SECRETS.has(name.toLowerCase().replace(/[\s_-]/g, ''));
}

/**
 * The request URL as logged: the value of every parameter the parser would read as a caller's key or ticket
 * (`apikey`, `APIKEY`, `api%6Bey`, `%61pikey`, each time it is repeated) replaced by [REDACTED], up to the
 * next `&` as the parser reads a value; everything else as it was sent.
 */
export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined || !MAY_NAME_SECRET.test(url)) return url;
  const query = url.search(/[?#]/);
  if (query === -1) return url;
  let out = '';
  let copied = 0;
  PARAMETER_NAME.lastIndex = query;
  for (let match = PARAMETER_NAME.exec(url); match !== null; match = PARAMETER_NAME.exec(url)) {
    if (!callerSecretName(match[1] as string)) continue;
    const value = match.index + match[0].length;
    const end = url.indexOf('&', value);
    out += `${url.slice(copied, value)}[REDACTED]`;
    copied = end === -1 ? url.length : end;
    PARAMETER_NAME.lastIndex = copied;
  }
  return copied === 0 ? url : out + url.slice(copied);
}

/** The one line logged per answered request, by the pipeline and by the hot path alike. */
export interface RequestLine {
  reqId: string;
  method: string | undefined;
  url: string | undefined;
  status: number;
  ms: number;
  cache: unknown;
  ip: string | undefined;
  /** The client key's name (CLIENT_KEYS), for a keyed caller. */
  client?: string | undefined;
  /** The MCP tools a POST /mcp called (comma-separated), absent on every other request. */
  tool?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the /mcp route to the tools it called, for the request line. */
    mcpTool?: string;
  }
}

/** pino's tracing channel around its serialisation (docs/diagnostics.md): APM agents subscribe to it. */
const asJsonChannel = tracingChannel('pino_asJson');

/**
 * Writes the request lines. They have a fixed shape, so they are put together here in the exact bytes
 * pino would write (its level prefix, time, bindings and message key are read through pino.symbols,
 * which pino exposes for performant integration). pino's generic path walks the object key by key, and
 * with pino's own buffered destination a line cost 2.4 µs against 1.1 µs here, scrub and batched write
 * included (in-process, 300,000 lines with varied URLs and ids). The secret scrub (the root's
 * streamWrite hook) still runs on every line. No redaction by path is needed: a request line holds only
 * the flat fields above, none an object that could carry a credential.
 *
 * Whatever hooks into pino's own path sees every request line too: while the logger has a mixin, a log
 * formatter or a logMethod hook (what OpenTelemetry's and other APM instrumentations add), or anything
 * subscribes to pino's `pino_asJson` tracing channel, lines go through `logger.info` instead.
 */
export class RequestLog {
  /** Everything before `reqId`: pino's level prefix, time and bindings. */
  private readonly prefix: () => string;
  private readonly tail: string;
  private readonly output: DestinationStream;
  private readonly hook: ((line: string) => string) | undefined;
  /** The logger is instrumented at creation (a mixin, formatter or logMethod hook): pino's path always. */
  private readonly instrumented: boolean;

  constructor(private readonly logger: Logger) {
    const own = logger as unknown as Record<symbol, unknown>;
    const { lsCacheSym, timeSym, chindingsSym, messageKeySym, endSym, streamSym, hooksSym, mixinSym, formattersSym } = pino.symbols;
    const time = own[timeSym] as () => string;
    const head = (own[lsCacheSym] as Record<number, string>)[logger.levels.values.info as number] as string;
    const bindings = own[chindingsSym] as string;
    this.prefix = time === pino.stdTimeFunctions.epochTime ? prefixByMillisecond(head, bindings) : () => head + time() + bindings;
    this.tail = `,${JSON.stringify(own[messageKeySym])}:"request"${own[endSym] as string}`;
    this.output = own[streamSym] as DestinationStream;
    const hooks = own[hooksSym] as { streamWrite?: (line: string) => string; logMethod?: unknown };
    this.hook = hooks.streamWrite;
    this.instrumented =
      own[mixinSym] !== undefined || (own[formattersSym] as { log?: unknown }).log !== undefined || hooks.logMethod !== undefined;
  }

  get enabled(): boolean {
    return this.logger.isLevelEnabled('info');
  }

  write(line: RequestLine): void {
    if (this.instrumented || asJsonChannel.hasSubscribers) {
      this.logger.info(line, 'request');
      return;
    }
    this.emit(line.reqId, sharedJson(line), line.ip, field(',"client":', line.client) + field(',"tool":', line.tool));
  }

  /**
   * A line whose fields from `method` to `cache` many lines share (the hot path's, for one remembered URL),
   * encoded once by `SharedFields`: the same bytes as write() gives the same line, for the few concatenations
   * that are left (the encoding and joining of those fields were a third of what a hot answer costs above a
   * bare server, callgrind).
   */
  writeShared(reqId: string, shared: SharedFields, ip: string | undefined): void {
    if (this.instrumented || asJsonChannel.hasSubscribers) {
      this.logger.info({ reqId, ...shared.fields, ip }, 'request');
      return;
    }
    this.emit(reqId, shared.json, ip, '');
  }

  /** `after`: the fields a line carries after `ip` (a keyed caller's client name, the MCP tool's), encoded. */
  private emit(reqId: string, shared: string, ip: string | undefined, after: string): void {
    const json = this.prefix() + field(',"reqId":', reqId) + shared + field(',"ip":', ip) + after + this.tail;
    this.output.write(this.hook === undefined ? json : this.hook(json));
  }

  /** A request whose answer failed on the way out; through the root logger, so the error is redacted by path too. */
  failed(line: RequestLine, error: Error): void {
    this.logger.error({ ...line, err: error }, 'request errored');
  }
}

/** The characters JSON.stringify escapes in a string (surrogates: it escapes lone ones). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it looks for.
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** One `,"key":value` as pino writes it: left out when undefined, non-finite numbers as null. */
function field(prefix: string, value: unknown): string {
  switch (typeof value) {
    case 'undefined':
    case 'function':
      return '';
    case 'string':
      // Most values need no escaping, and a test is cheaper than a call to JSON.stringify.
      return prefix + (ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`);
    case 'number':
      return prefix + (Number.isFinite(value) ? String(value) : 'null');
    case 'boolean':
      return prefix + String(value);
    default:
      return prefix + JSON.stringify(value);
  }
}

/** The fields of a line between `reqId` and `ip`, as write() encodes them. */
type Shared = Pick<RequestLine, 'method' | 'url' | 'status' | 'ms' | 'cache'>;

function sharedJson(line: Shared): string {
  return (
    field(',"method":', line.method) +
    field(',"url":', line.url) +
    field(',"status":', line.status) +
    field(',"ms":', line.ms) +
    field(',"cache":', line.cache)
  );
}

/** Fields that many request lines share, encoded once (RequestLog.writeShared). */
export class SharedFields {
  readonly json: string;

  constructor(readonly fields: Shared) {
    this.json = sharedJson(fields);
  }
}

/** The level prefix, pino's default time (`,"time":<ms>`) and the bindings, put together once per millisecond. */
function prefixByMillisecond(head: string, bindings: string): () => string {
  let at = Number.NaN;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      text = `${head},"time":${now}${bindings}`;
    }
    return text;
  };
}

/** One line per request, written when the response is finished (Fastify's default writes two). */
export class RequestLogController extends LogController {
  constructor(private readonly log: RequestLog) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      reqId: request.id,
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
      cache: reply.getHeader('x-cache'),
      ip: request.ip,
      client: request.caller?.key?.name,
      tool: request.mcpTool,
    };
    // Not reply.log: it carries reqId already, and a line must hold each key once.
    if (error) this.log.failed(line, error);
    else if (this.log.enabled) this.log.write(line);
  }
}
