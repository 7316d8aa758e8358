// The recorded corpus (test/fixtures/recorded/<provider>/): real answers captured from the live services,
// or the provider's documented example where no capture exists, each listed with its request and
// provenance in recordings.json (and SOURCES.md). Contract, replay and conformance tests read it here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const RECORDED_ROOT = join(import.meta.dirname, '..', 'fixtures', 'recorded');
export const PROVIDERS = ['alpha-vantage', 'yahoo', 'massive', 'ibkr', 'tastytrade'] as const;
export type Provider = (typeof PROVIDERS)[number];
export const ORIGINS = ['captured', 'documented', 'library-mock'] as const;

export interface RecordedRequest {
  method: string;
  /** The provider's path without its base (`/query`, `/v8/finance/chart/AAPL`, `/iserver/auth/status`). */
  path: string;
  query?: Record<string, string>;
  requestBody?: unknown;
}

export interface Recording {
  name: string;
  /** The body file beside recordings.json. */
  body: string;
  request: RecordedRequest;
  status: number;
  contentType?: string;
  origin: (typeof ORIGINS)[number];
  source: string;
  date: string;
  edits: string;
  notes?: string;
}

export interface Loaded extends Recording {
  provider: Provider;
  /** The body bytes as recorded. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

const cache = new Map<Provider, Loaded[]>();

export function recordings(provider: Provider): Loaded[] {
  let loaded = cache.get(provider);
  if (loaded === undefined) {
    const dir = join(RECORDED_ROOT, provider);
    const list = JSON.parse(readFileSync(join(dir, 'recordings.json'), 'utf8')) as Recording[];
    loaded = list.map((entry) => {
      const text = readFileSync(join(dir, entry.body), 'utf8');
      return { ...entry, provider, text, json: parseJson(text) };
    });
    cache.set(provider, loaded);
  }
  return loaded;
}

export function recording(provider: Provider, name: string): Loaded {
  const found = recordings(provider).find((r) => r.name === name);
  if (found === undefined) throw new Error(`no recording "${name}" of ${provider}`);
  return found;
}

/** Every file of a provider's directory, for the corpus's own checks. */
export function corpusFiles(provider: Provider): string[] {
  return readdirSync(join(RECORDED_ROOT, provider));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
