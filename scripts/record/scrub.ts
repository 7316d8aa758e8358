// Scrubbing a recorded answer before it is written: credentials, tokens, account numbers and the personal
// details a broker sends about its customer. Text-level replacements, so every byte not scrubbed stays as
// the provider sent it (a body is never parsed and re-serialized). Pure: the same text, options and
// aliases always give the same result; the aliases it returns keep one real id on one placeholder for
// the rest of a run.
//
// `credentialFindings` is the other side: anything in a text that still looks like a credential. The
// recorder checks every file against it before writing, and the corpus test checks every file on disk.

const REDACTED = 'REDACTED';
/** The placeholder hex of a session id (the corpus's IBKR tickle has it), cut to the real one's length. */
const PLACEHOLDER_HEX = '0123456789abcdef'.repeat(8);
const PLACEHOLDER_USER_ID = '12345678';
const PLACEHOLDER_MAC = '00:00:00:00:00:00';
const PLACEHOLDER_EMAIL = 'user@example.com';

export interface Credential {
  /** How the edit is described, e.g. "the Alpha Vantage key (ALPHA_VANTAGE_API_KEY)". */
  label: string;
  value: string;
}

export interface ScrubOptions {
  /** `ibkr` and `tastytrade` bodies are account bodies: their ids, names and emails are scrubbed too. */
  provider: string;
  /** The configured secrets: each one is replaced by REDACTED wherever it appears. */
  credentials: readonly Credential[];
  /** Real id -> placeholder, as decided earlier in the run. */
  aliases?: ReadonlyMap<string, string>;
}

export interface Scrubbed {
  text: string;
  /** What was replaced, one phrase per kind with its count; empty when nothing was. */
  edits: string[];
  /** `aliases` plus the ids first seen in this text. */
  aliases: Map<string, string>;
}

/** Fields whose value is a secret, whatever it looks like: tokens, secrets, passwords, keys. */
const SECRET_FIELD =
  /^(?:[\w-]*[-_])?(?:access[-_]?token|refresh[-_]?token|id[-_]?token|session[-_]?token|remember[-_]?token|streamer[-_]?token|token|secret|client[-_]?secret|password|passwd|api[-_]?key|apikey)$/i;
/** Fields naming a person (or chosen by one): accountTitle "Jane Doe", nickname, first-name, email. */
// Not "fullName" or "name": IBKR's positions call a contract's description so.
const NAME_FIELD =
  /^(?:accountTitle|displayName|accountAlias|alias|nickname|username|userName|user[-_]name|login|(?:first|last|middle|legal|given|family|prefix|suffix)[-_]name|firstName|lastName|middleName|givenName|familyName|email|email[-_]?address|emailAddress|external[-_]?id|externalId)$/;
const SESSION_FIELD = /^(?:session|sessionId|session[-_]id)$/;
const USER_ID_FIELD = /^(?:userId|userID|user[-_]id)$/;

/** A JSON string member: `"key": "value"` (value with its escapes). */
const STRING_MEMBER = /"([\w-]+)"(\s*:\s*)"((?:[^"\\]|\\.)*)"/g;
/** A JSON number member: `"key": 123`. */
const NUMBER_MEMBER = /"([\w-]+)"(\s*:\s*)(\d+)\b/g;
/** apiKey=…, apikey=…, api_key=… inside a URL (Massive's next_url may carry one). */
const KEY_IN_URL = /([?&](?:api[-_]?key|access_token|token)=)(?!REDACTED\b)([^&#"'\s\\<>]+)/gi;
const BEARER = /\b(Bearer\s+)(?!REDACTED\b)([A-Za-z0-9\-._~+/]{8,}=*)/g;
const MAC = /\b[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4}\b/g;
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** IBKR account ids: U1234567 (live), DU1234567 (paper). */
const IBKR_ACCOUNT = /\b(D?U)(\d{5,9})\b/g;
/** Tastytrade account numbers look like 5WT12345; the ones an answer names in "account-number" are taken as they are. */
const TASTYTRADE_ACCOUNT = /\b5[A-Z]{2}\d{5}\b/g;

class EditLog {
  private readonly counts = new Map<string, number>();
  add(what: string, n = 1): void {
    if (n > 0) this.counts.set(what, (this.counts.get(what) ?? 0) + n);
  }
  list(): string[] {
    return [...this.counts].map(([what, n]) => (n === 1 ? what : `${what} (${n}×)`));
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Every occurrence of each value (longest first, in one pass, so a replacement is never replaced again). */
function replaceAll(text: string, replacements: ReadonlyMap<string, string>, onHit: (from: string) => void): string {
  const keys = [...replacements.keys()].filter((k) => k !== '').sort((a, b) => b.length - a.length);
  if (keys.length === 0) return text;
  const pattern = new RegExp(keys.map(escapeRegExp).join('|'), 'g');
  return text.replace(pattern, (hit) => {
    onHit(hit);
    return replacements.get(hit) as string;
  });
}

function isPlaceholderValue(value: string): boolean {
  return value === '' || value === REDACTED || /^(.)\1*$/.test(value) || PLACEHOLDER_HEX.startsWith(value.toLowerCase());
}

function placeholderHex(real: string): string {
  return PLACEHOLDER_HEX.slice(0, real.length).padEnd(real.length, '0');
}

export function scrub(text: string, options: ScrubOptions): Scrubbed {
  const edits = new EditLog();
  const aliases = new Map(options.aliases ?? []);
  const broker = options.provider === 'ibkr' || options.provider === 'tastytrade';
  let out = text;

  // 1. The configured credentials, as they are and URL-encoded.
  const secrets = new Map<string, string>();
  const labels = new Map<string, string>();
  for (const { label, value } of options.credentials) {
    if (value.length < 4) continue;
    for (const form of new Set([value, encodeURIComponent(value)])) {
      secrets.set(form, REDACTED);
      labels.set(form, label);
    }
  }
  out = replaceAll(out, secrets, (hit) => edits.add(`${labels.get(hit)} -> ${REDACTED}`));

  // 2. Keys in URLs and bearer tokens, whoever's they are.
  out = out.replace(KEY_IN_URL, (_, name: string) => {
    edits.add(`${name.slice(1, -1)}= value in a URL -> ${REDACTED}`);
    return `${name}${REDACTED}`;
  });
  out = out.replace(BEARER, (_, bearer: string) => {
    edits.add(`bearer token -> ${REDACTED}`);
    return `${bearer}${REDACTED}`;
  });

  // 3. Secret-named fields (OAuth access and refresh tokens, secrets, passwords).
  out = out.replace(STRING_MEMBER, (member, key: string, colon: string, value: string) => {
    if (!SECRET_FIELD.test(key) || value === '' || value === REDACTED) return member;
    edits.add(`"${key}" -> ${REDACTED}`);
    return `"${key}"${colon}"${REDACTED}"`;
  });

  if (broker) out = scrubAccountBody(out, options.provider, aliases, edits);
  return { text: out, edits: edits.list(), aliases };
}

function scrubAccountBody(text: string, provider: string, aliases: Map<string, string>, edits: EditLog): string {
  let out = text;
  const accountLabel = provider === 'ibkr' ? 'IBKR account id -> U1234567/DU1234567 style' : 'account number -> 5WT00001 style';

  // Account ids: one placeholder per real id for the whole run.
  if (provider === 'ibkr') {
    for (const match of out.matchAll(IBKR_ACCOUNT)) alias(aliases, match[0], match[1] as string);
  } else {
    for (const match of out.matchAll(/"account-number"\s*:\s*"([^"\\]+)"/g)) alias(aliases, match[1] as string, '5WT');
    for (const match of out.matchAll(TASTYTRADE_ACCOUNT)) alias(aliases, match[0], '5WT');
  }
  out = replaceAll(out, aliases, () => edits.add(accountLabel));
  const placeholders = new Set(aliases.values());

  // Session ids, user ids, hardware ids, MAC addresses.
  out = out.replace(STRING_MEMBER, (member, key: string, colon: string, value: string) => {
    if (SESSION_FIELD.test(key) && !isPlaceholderValue(value)) {
      edits.add(`"${key}" -> placeholder`);
      return `"${key}"${colon}"${/^[0-9a-f]+$/i.test(value) ? placeholderHex(value) : REDACTED}"`;
    }
    if (USER_ID_FIELD.test(key) && !isPlaceholderValue(value) && value !== PLACEHOLDER_USER_ID) {
      edits.add(`"${key}" -> ${PLACEHOLDER_USER_ID}`);
      return `"${key}"${colon}"${/^\d+$/.test(value) ? PLACEHOLDER_USER_ID : REDACTED}"`;
    }
    if (key === 'hardware_info' && /[1-9a-fA-F]/.test(value)) {
      edits.add('"hardware_info" -> zeros');
      return `"${key}"${colon}"${value.replace(/[0-9A-Fa-f]/g, '0')}"`;
    }
    return member;
  });
  out = out.replace(NUMBER_MEMBER, (member, key: string, colon: string, value: string) => {
    if (!USER_ID_FIELD.test(key) || value === PLACEHOLDER_USER_ID) return member;
    edits.add(`"${key}" -> ${PLACEHOLDER_USER_ID}`);
    return `"${key}"${colon}${PLACEHOLDER_USER_ID}`;
  });
  out = out.replace(MAC, (mac) => {
    if (/^[0:-]+$/.test(mac)) return mac;
    edits.add(`MAC address -> ${PLACEHOLDER_MAC}`);
    return PLACEHOLDER_MAC;
  });

  // Names and emails: a person's name in accountTitle/displayName, a chosen nickname or alias.
  const scrubName = (key: string, value: string): string => {
    if (isPlaceholderValue(value) || placeholders.has(value)) return value;
    edits.add(`"${key}" -> ${REDACTED}`);
    return REDACTED;
  };
  out = out.replace(STRING_MEMBER, (member, key: string, colon: string, value: string) =>
    NAME_FIELD.test(key) ? `"${key}"${colon}"${scrubName(key, value)}"` : member,
  );
  // IBKR's /iserver/accounts "aliases": {"U1234567": "<alias>"}: the values are chosen by the customer.
  out = out.replace(/("aliases"\s*:\s*\{)([^{}]*)(\})/g, (_, open: string, inner: string, close: string) => {
    const scrubbed = inner.replace(
      STRING_MEMBER,
      (_m, key: string, colon: string, value: string) => `"${key}"${colon}"${scrubName('aliases', value)}"`,
    );
    return `${open}${scrubbed}${close}`;
  });
  out = out.replace(EMAIL, (email) => {
    if (email === PLACEHOLDER_EMAIL) return email;
    edits.add(`email -> ${PLACEHOLDER_EMAIL}`);
    return PLACEHOLDER_EMAIL;
  });
  return out;
}

/** Gives `real` the next placeholder of its kind unless it has one already. */
function alias(aliases: Map<string, string>, real: string, prefix: string): void {
  if (aliases.has(real)) return;
  const taken = [...aliases.values()].filter((v) => v.startsWith(prefix) && v.length === (prefix === '5WT' ? 8 : prefix.length + 7)).length;
  aliases.set(real, prefix === '5WT' ? `5WT${String(taken + 1).padStart(5, '0')}` : `${prefix}${1_234_567 + taken}`);
}

/** The edits column of a recording: what was scrubbed, or "none". */
export function describeEdits(edits: readonly string[]): string {
  return edits.length === 0 ? 'none' : `Scrubbed by npm run record: ${edits.join('; ')}.`;
}

/** Values that stand for a key in public documentation and recordings (Alpha Vantage's own demo and test keys). */
const PUBLIC_PLACEHOLDER_KEYS = new Set(['redacted', 'demo', 'test']);
/** Field names whose value is a credential when it looks like one. */
const KEY_NAMED_FIELD = /^[\w-]*(?:token|secret|password|passwd|api[-_]?key|apikey|session|credential|signature)[\w-]*$/i;
const LONG_HEX = /^[0-9a-fA-F]{16,}$/;
const LONG_BASE64 = /^[A-Za-z0-9+/_.-]{20,}={0,2}$/;
/** Long values that are words, not secrets ("market-data-stream-session"). */
const WORDS = /^[a-z]+(?:[-_.][a-z]+)*$/;

/**
 * What in `text` looks like a credential: one of `known` (the configured or sandbox credentials), an
 * `apikey=` value other than REDACTED (or Alpha Vantage's public demo/test keys), a `Bearer <token>`,
 * a long hex or base64 value in a field named like a secret. Empty when nothing does.
 */
export function credentialFindings(text: string, known: readonly string[] = []): string[] {
  const findings: string[] = [];
  for (const value of known) if (value.length >= 4 && text.includes(value)) findings.push(`a known credential ("${value.slice(0, 3)}…")`);
  for (const match of text.matchAll(/\bapi[-_]?key=([^&#"'\s\\<>),;]+)/gi)) {
    if (!PUBLIC_PLACEHOLDER_KEYS.has((match[1] as string).toLowerCase())) findings.push(`a key in a URL (${match[0].slice(0, 10)}…)`);
  }
  for (const match of text.matchAll(BEARER)) findings.push(`a bearer token (${match[0].slice(0, 10)}…)`);
  for (const match of text.matchAll(STRING_MEMBER)) {
    const [, key, , value] = match as unknown as [string, string, string, string];
    if (!KEY_NAMED_FIELD.test(key) || isPlaceholderValue(value)) continue;
    if (LONG_HEX.test(value) || (LONG_BASE64.test(value) && !WORDS.test(value))) findings.push(`a secret-looking value in "${key}"`);
  }
  return findings;
}
