// The generated block of docs/reference/alpha-vantage-functions.md: the function list's source, the cache families
// and every function, from src/wire/alpha-vantage/functions.ts and src/core/config-schema.ts. `npm run docs:generate`
// writes it (scripts/docs/reference.ts lists it); test/scripts/docs-reference.test.ts fails when it differs.
import { AV_FAMILIES, type AvFamily, CACHE_WINDOWS } from '../../src/core/config-schema.js';
import { wrap } from './wrap.js';
import {
  ALPHA_VANTAGE_FUNCTIONS,
  type FunctionSpec,
  FUNCTIONS_SOURCE,
  type OwnedBy,
  ownerOf,
} from '../../src/wire/alpha-vantage/functions.js';

const code = (names: readonly string[]) => (names.length === 0 ? '–' : names.map((n) => `\`${n}\``).join(', '));

function seconds(s: number): string {
  if (s % 86_400 === 0) return s === 86_400 ? 'a day' : `${s / 86_400} days`;
  if (s % 3_600 === 0) return s === 3_600 ? 'an hour' : `${s / 3_600} hours`;
  if (s % 60 === 0) return s === 60 ? 'a minute' : `${s / 60} minutes`;
  return `${s} s`;
}

const ANSWERED_BY: Record<OwnedBy, string> = {
  quote: `the service's quote (fresh ${seconds(CACHE_WINDOWS.QUOTE.fresh)}; Yahoo's price when Alpha Vantage cannot answer)`,
  search: `the service's search (fresh ${seconds(CACHE_WINDOWS.SEARCH.fresh)})`,
  series: "the service's stored bars",
  technical: "the service: computed from Yahoo's bars or asked of Alpha Vantage, as `TECHNICAL_SOURCE` says",
};

/** A Markdown table; the formatter (Biome) pads its columns when the page is written. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)];
}

function formats(f: FunctionSpec): string {
  if (f.formats === 'csv') return 'CSV only';
  if (f.formats === 'json') return 'JSON';
  return 'JSON, CSV';
}

function answeredBy(f: FunctionSpec): string {
  const owner = ownerOf(f.name);
  return owner === undefined ? `forwarded, ${f.family}` : ANSWERED_BY[owner];
}

function familyRows(): string[][] {
  return (Object.entries(AV_FAMILIES) as [AvFamily, (typeof AV_FAMILIES)[AvFamily]][]).map(([name, { fresh, stale, what }]) => {
    const members = ALPHA_VANTAGE_FUNCTIONS.filter((f) => f.family === name && ownerOf(f.name) === undefined).length;
    return [name, `\`CACHE_AV_${name}_SECONDS\``, seconds(fresh), seconds(stale), String(members), what];
  });
}

function functionRows(): string[][] {
  return ALPHA_VANTAGE_FUNCTIONS.map((f) => {
    const repeat = f.repeatable === undefined ? '' : ` (${code(f.repeatable)} may be given twice)`;
    return [
      `\`${f.name}\``,
      f.family,
      `${code(f.required)}${repeat}`,
      code(f.optional),
      formats(f),
      f.premium ? 'premium' : 'free',
      answeredBy(f),
    ];
  });
}

/** The block: where the list comes from, the cache families, every function and the evidence of each premium flag. */
export function alphaVantageFunctionsReference(): string {
  const premium = ALPHA_VANTAGE_FUNCTIONS.filter((f) => f.premium);
  const lines = [
    `The list is Alpha Vantage's documentation page, <${FUNCTIONS_SOURCE.page}>, as read on ${FUNCTIONS_SOURCE.read}.`,
    'The page itself could not be fetched where the list was written (no internet access); it was transcribed from two',
    'machine-made copies of it, and the premium flags from the evidence named under [Premium functions](#premium-functions):',
    '',
    ...FUNCTIONS_SOURCE.via.map((url) => `- <${url}>`),
    '',
    '## Cache families',
    '',
    ...table(['Family', 'Setting', 'Fresh (default)', 'Served stale at most', 'Forwarded functions', 'What'], familyRows()),
    '',
    `## Functions (${ALPHA_VANTAGE_FUNCTIONS.length})`,
    '',
    'In the order of the documentation page, then the indicators.',
    '',
    ...table(['Function', 'Family', 'Required', 'Optional', 'Formats', 'Plan', 'Answered by'], functionRows()),
    '',
    '## Premium functions',
    '',
    'Flagged premium, each with the evidence for the flag:',
    '',
    ...premium.map((f) => wrap(`- \`${f.name}\`: ${f.premiumEvidence}.`, 118).replaceAll('\n', '\n  ')),
  ];
  return lines.join('\n');
}
