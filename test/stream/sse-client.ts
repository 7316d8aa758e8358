// A stream reader for tests: a real HTTP request on loopback, parsed by eventsource-parser (a third-party
// SSE parser), with waits on events rather than sleeps.
import { EventEmitter, once } from 'node:events';
import { type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http';
import type { TestContext } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent extends EventSourceMessage {
  at: number;
}

export class SseClient extends EventEmitter {
  readonly events: SseEvent[] = [];
  comments = 0;
  retry: number | undefined;
  ended = false;

  private constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    readonly body: string,
    private readonly res: IncomingMessage,
  ) {
    super();
  }

  /** Opens the stream; a non-200 answer is read whole into `body`. */
  static async open(t: TestContext, url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.setEncoding('utf8');
    if (res.statusCode !== 200) {
      let body = '';
      for await (const chunk of res) body += chunk;
      return new SseClient(res.statusCode ?? 0, res.headers, body, res);
    }
    const client = new SseClient(200, res.headers, '', res);
    t.after(() => client.close());
    const parser = createParser({
      onEvent: (event) => {
        client.events.push({ ...event, at: Date.now() });
        client.emit('event');
      },
      onComment: () => {
        client.comments += 1;
        client.emit('event');
      },
      onRetry: (ms) => {
        client.retry = ms;
      },
    });
    res.on('data', (chunk: string) => parser.feed(chunk));
    res.on('close', () => {
      client.ended = true;
      client.emit('event');
    });
    return client;
  }

  of(type: string): SseEvent[] {
    return this.events.filter((e) => e.event === type);
  }

  /** Resolves once `done()` holds, checked after every event; rejects after `timeoutMs`. */
  async until(done: (client: SseClient) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (done(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('event', check);
        reject(new Error(`timed out waiting for ${what}; events: ${this.events.map((e) => e.event).join(',')}`));
      }, timeoutMs);
      const check = () => {
        if (!done(this)) return;
        clearTimeout(timer);
        this.off('event', check);
        resolve();
      };
      this.on('event', check);
    });
  }

  close(): void {
    this.res.destroy();
  }
}

/** Resolves once `done()` holds (looked at every 20 ms); rejects after `timeoutMs`. */
export async function eventually(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * How many ticks reached the first viewer of every replica (a tick's time is its event id's first part).
 * Each replica folds the ticks of one event-loop turn into one event, and its turns are its own, so under
 * load two replicas can name few of the same ticks at first: callers wait for a count rather than read it once.
 */
export function ticksOnEveryReplica(byReplica: readonly (readonly SseClient[])[], topic = 'brokerQuotes'): number {
  const ticks = byReplica.map((viewers) => new Set(viewers[0]?.of(topic).map((e) => e.id?.split('-')[0])));
  return [...(ticks[0] ?? [])].filter((tick) => ticks.every((set) => set.has(tick))).length;
}
