// CLIENT_KEYS (or the file CLIENT_KEYS_FILE names): the callers that present a key, each with its own share of
// the provider budgets, its own rate limit, and scopes. One entry a line (or separated by `;`), `#` comments:
//
//   dashboard sha256=9f86d081…  share=2 scopes=market
//   agents    sha256=2c26b46b…  scopes=market,mcp rate=120
//   laptop    sha256=fcde2b2e…  scopes=market,broker
//
// Only the SHA-256 of each key is configured, so the configuration, a status or a log can never leak one. A
// request sends its key as `Authorization: Bearer <key>`; the key is hashed and looked up (a hash table
// lookup on a digest tells a caller nothing about how close a guess was).
import { createHash } from 'node:crypto';
import { bearerToken } from './bearer.js';
import { type Caller, CLIENT_SCOPES, type ClientKey, type ClientScope, keyCaller } from './caller.js';

const NAME = /^[A-Za-z0-9_.-]{1,40}$/;
const SHA256 = /^[0-9a-f]{64}$/i;
const FIELDS = new Set(['sha256', 'share', 'scopes', 'rate']);

/** The entries of CLIENT_KEYS; throws a TypeError naming the first entry (by position and name, never its hash) that is wrong. */
export function parseClientKeys(text: string): ClientKey[] {
  const keys: ClientKey[] = [];
  const entries = text
    .split(/[\n;]/)
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== '');
  entries.forEach((entry, index) => {
    const [name = '', ...fields] = entry.split(/\s+/);
    const where = `entry ${index + 1}${NAME.test(name) ? ` (${name})` : ''}`;
    if (!NAME.test(name)) throw new TypeError(`${where}: a name of letters, digits, ".", "_" or "-" (at most 40) comes first`);
    if (keys.some((key) => key.name === name)) throw new TypeError(`${where}: the name is used twice`);
    const values = new Map<string, string>();
    for (const field of fields) {
      const [label = '', value = ''] = field.split('=', 2);
      if (!FIELDS.has(label) || value === '') throw new TypeError(`${where}: "${label}" is not one of sha256=, share=, scopes=, rate=`);
      values.set(label, value);
    }
    const sha256 = values.get('sha256') ?? '';
    if (!SHA256.test(sha256)) throw new TypeError(`${where}: sha256= must be the key's SHA-256 in hex (64 characters)`);
    if (keys.some((key) => key.sha256 === sha256.toLowerCase())) throw new TypeError(`${where}: the same key is listed twice`);
    const share = Number(values.get('share') ?? '1');
    if (!(share > 0 && share <= 100)) throw new TypeError(`${where}: share= must be a number above 0, at most 100`);
    const rate = values.get('rate');
    if (rate !== undefined && !/^\d{1,9}$/.test(rate)) throw new TypeError(`${where}: rate= must be requests per minute (0 = no limit)`);
    const scopes = (values.get('scopes') ?? 'market').split(',');
    const unknown = scopes.find((scope) => !(CLIENT_SCOPES as readonly string[]).includes(scope));
    if (unknown !== undefined) throw new TypeError(`${where}: scope "${unknown}" is not one of ${CLIENT_SCOPES.join(', ')}`);
    keys.push({
      name,
      sha256: sha256.toLowerCase(),
      share,
      scopes: new Set(scopes as ClientScope[]),
      ratePerMinute: rate === undefined ? undefined : Number(rate),
    });
  });
  return keys;
}

/** What a request's Authorization header makes of it. */
export type KeyVerdict = { kind: 'none' } | { kind: 'key'; caller: Caller & { key: ClientKey } } | { kind: 'invalid' };

const NONE: KeyVerdict = { kind: 'none' };
const INVALID: KeyVerdict = { kind: 'invalid' };

export class ClientKeys {
  private readonly bySha = new Map<string, KeyVerdict>();
  private readonly others: ReadonlySet<string>;

  /**
   * `otherTokens`: bearer tokens of their own (BROKER_TOKEN, METRICS_TOKEN, MCP_TOKEN): sent to the routes they
   * open, they are not a wrong client key, and the caller stays the anonymous one of its address.
   */
  constructor(
    readonly keys: readonly ClientKey[],
    otherTokens: readonly (string | undefined)[] = [],
  ) {
    for (const key of keys) this.bySha.set(key.sha256, { kind: 'key', caller: { ...keyCaller(key), key } });
    this.others = new Set(otherTokens.filter((token): token is string => token !== undefined).map(sha256));
  }

  get configured(): boolean {
    return this.keys.length > 0;
  }

  /** `none` without keys configured or without a bearer token; `invalid` for a bearer token that is no key. */
  verdict(authorization: string | undefined): KeyVerdict {
    if (!this.configured || authorization === undefined) return NONE;
    const token = bearerToken(authorization);
    if (token === undefined) return NONE;
    const digest = sha256(token);
    return this.bySha.get(digest) ?? (this.others.has(digest) ? NONE : INVALID);
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
