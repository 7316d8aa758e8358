// fast-check generators for hostile query strings. Values are percent-encoded byte by byte (so lone
// surrogates, controls and emoji all reach the service), except the raw fragments, which are sent as
// they are to try parameter injection, bad escapes and traversal.
import fc from 'fast-check';

const UNRESERVED = /[A-Za-z0-9._~-]/;

/** Percent-encodes every byte outside the unreserved set (UTF-8; a lone surrogate becomes U+FFFD). */
export function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += UNRESERVED.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Sent unencoded: injection, broken escapes, NUL, CRLF, traversal, other URLs. */
const RAW_FRAGMENTS = [
  '%00',
  'IBM%00',
  '%00IBM',
  '%',
  '%2',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%FF%FE',
  '%ED%A0%80',
  '..%2F..%2Fetc%2Fpasswd',
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2f',
  'IBM/../../v3/reference/dividends',
  '..',
  'IBM&apikey=evil',
  'IBM%26apikey%3Devil',
  'IBM&apiKey=evil',
  'IBM&function=TIME_SERIES_DAILY',
  'IBM%26function%3DTIME_SERIES_DAILY',
  'IBM&symbol=MSFT',
  '%0D%0AX-Injected:%201',
  'IBM%0D%0A',
  'IBM%09',
  '[]',
  '{}',
  'IBM;id',
  '$(id)',
  '`id`',
  "'OR'1'='1",
  '<script>',
  '%3Cscript%3E',
  '+',
  '++',
  '%20IBM%20',
  'IBM?x=1',
  'IBM=1',
  'http://evil.example/',
  '//evil.example',
  '@evil.example',
  '%u0000',
  '__proto__',
  'constructor',
  '-1',
  '1e309',
  'NaN',
  '0x10',
] as const;

const KNOWN_SYMBOLS = ['IBM', 'aapl', 'MSFT', 'BRK.B', '^GSPC', 'GC=F', 'BTC-USD', 'SPY', 'ZZZZ', 'x'];

export const validSymbol = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_SYMBOLS) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9.^=-]{1,20}$/) },
);

const controlChars = fc.string({ unit: fc.integer({ min: 0, max: 31 }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 4 });

/** One encoded or raw value for any parameter. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: validSymbol.map(pct) },
  { weight: 3, arbitrary: fc.constantFrom(...RAW_FRAGMENTS) },
  { weight: 2, arbitrary: fc.tuple(validSymbol, fc.constantFrom(...RAW_FRAGMENTS)).map(([s, raw]) => `${pct(s)}${raw}`) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }).map(pct) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).map(pct) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map(pct) },
  { weight: 2, arbitrary: fc.tuple(validSymbol, controlChars).map(([s, c]) => pct(s + c)) },
  { weight: 1, arbitrary: fc.integer({ min: 21, max: 7_000 }).map((n) => 'A'.repeat(n)) },
  { weight: 1, arbitrary: fc.constant('') },
);

const HOSTILE_NAMES = [
  'apikey',
  'apiKey',
  'APIKEY',
  'function',
  'datatype',
  'outputsize',
  'ticker',
  'cursor',
  'limit',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'symbol[]',
  'symbol[0]',
  'symbol%00',
  'SYMBOL',
  'symbols',
  '',
];

type Mutation =
  | { kind: 'replace'; name: string; value: string }
  | { kind: 'add'; name: string; value: string }
  | { kind: 'repeat' | 'drop'; index: number }
  | { kind: 'raw'; text: string };

/**
 * A valid query for the route (required parameters always, optional ones sometimes), then up to three
 * mutations: a value replaced by a hostile one, a hostile or repeated parameter added, a parameter
 * dropped, stray separators. Unmutated and lightly mutated queries reach the upstream, which is where a
 * changed upstream URL would show.
 */
export function hostileQuery(valid: Record<string, fc.Arbitrary<string>>, required: string[] = Object.keys(valid)): fc.Arbitrary<string> {
  const names = Object.keys(valid);
  const base = fc.record(valid, { requiredKeys: required as never[] });
  const name = fc.constantFrom(...names, ...HOSTILE_NAMES);
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.record({
      kind: fc.constant('replace' as const),
      name: names.length > 0 ? fc.constantFrom(...names) : name,
      value: hostileValue,
    }) as fc.Arbitrary<Mutation>,
    fc.record({ kind: fc.constant('add' as const), name, value: hostileValue }),
    fc.record({ kind: fc.constantFrom('repeat' as const, 'drop' as const), index: fc.nat(5) }),
    fc.record({
      kind: fc.constant('raw' as const),
      text: fc.oneof(fc.constantFrom('&', '&&', '=', '==', 'apikey', '%26', ';'), fc.string({ maxLength: 10 }).map(pct)),
    }),
  );
  return fc.tuple(base, fc.array(mutation, { maxLength: 3 })).map(([values, mutations]) => {
    const pairs = Object.entries(values as Record<string, string>).map(([n, v]) => `${n}=${v}`);
    for (const m of mutations) {
      if (m.kind === 'raw') pairs.push(m.text);
      else if (m.kind === 'add') pairs.push(`${m.name}=${m.value}`);
      else if (m.kind === 'replace') {
        const i = pairs.findIndex((p) => p.startsWith(`${m.name}=`));
        if (i >= 0) pairs[i] = `${m.name}=${m.value}`;
        else pairs.push(`${m.name}=${m.value}`);
      } else if (pairs.length > 0) {
        const i = m.index % pairs.length;
        if (m.kind === 'repeat') pairs.push(pairs[i] as string);
        else pairs.splice(i, 1);
      }
    }
    return pairs.join('&');
  });
}
