// One pino logger for the service. Secrets are removed twice: by field path, and by value from every
// finished line, so a key can never reach a log even through an unexpected error message.
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.js';

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

export function secretsOf(config: Config): string[] {
  const { alphaVantage, massive, broker, metrics } = config;
  return [alphaVantage.apiKey, massive.apiKey, broker.tastytrade.clientSecret, broker.tastytrade.refreshToken, metrics.token].filter(
    (s): s is string => s !== undefined && s.length >= 4,
  );
}

/** Replaces every occurrence of a secret in a finished line. */
export function scrubSecrets(line: string, secrets: readonly string[]): string {
  for (const secret of secrets) if (line.includes(secret)) line = line.split(secret).join('[REDACTED]');
  return line;
}

/** JSON lines are written in blocks of this many bytes... */
const BUFFER_BYTES = 4096;
/** ...or after this long, so that a quiet service's lines still show within a second. */
const FLUSH_EVERY_MS = 1_000;

/**
 * Where the service's lines go: stdout, made readable for a person (`pretty`) or as JSON for a
 * collector. JSON lines are buffered and written in blocks, synchronously: a write per line (even
 * handed to the thread pool, as `sync: false` does) was the largest cost of the request log on a cache
 * hit (profiled; see the README's performance note). The buffer is flushed every second, on shutdown
 * (server.ts) and, whatever ends the process, on `exit`.
 */
export function stdoutDestination(format: Config['logFormat']): DestinationStream {
  if (format === 'pretty') return prettyLines(1);
  const out = pino.destination({ dest: 1, sync: true, minLength: BUFFER_BYTES, periodicFlush: FLUSH_EVERY_MS });
  process.once('exit', () => out.flushSync());
  return out;
}

/** pino-pretty, written synchronously: a terminal shows each line as it happens. */
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

/** A key a caller put in the query string (Alpha Vantage clients send `apikey`): never written to a log. */
const CALLER_SECRET = /([?&](?:api_?key|token)=)[^&#]*/gi;
const HAS_CALLER_SECRET = /[?&](?:api_?key|token)=/i;

/** The request URL as logged: any caller-sent key replaced by [REDACTED]. */
export function redactUrl(url: string | undefined): string | undefined {
  return url !== undefined && HAS_CALLER_SECRET.test(url) ? url.replace(CALLER_SECRET, '$1[REDACTED]') : url;
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
}

/**
 * Writes request lines through a child logger without the wildcard redact paths: with them pino runs
 * every field of every line through the redactor, ~20 µs a line (measured), more than answering a cache
 * hit. A request line holds only the flat fields above, none an object that could carry a credential, and
 * the by-value secret scrub (the root's streamWrite hook) still applies to it.
 */
export class RequestLog {
  private readonly lines: Logger;

  constructor(private readonly logger: Logger) {
    this.lines = logger.child({}, { redact: [] });
  }

  get enabled(): boolean {
    return this.lines.isLevelEnabled('info');
  }

  write(line: RequestLine): void {
    this.lines.info(line, 'request');
  }

  /** A request whose answer failed on the way out; through the root logger, so the error is redacted by path too. */
  failed(line: RequestLine, error: Error): void {
    this.logger.error({ ...line, err: error }, 'request errored');
  }
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
    };
    // Not reply.log: it carries reqId already, and a line must hold each key once.
    if (error) this.log.failed(line, error);
    else if (this.log.enabled) this.log.write(line);
  }
}
