import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AV_FAMILIES } from '../../../src/core/config-schema.js';
import {
  ALPHA_VANTAGE_FUNCTIONS,
  FUNCTION_NAMES,
  FUNCTIONS_SOURCE,
  functionSpec,
  ownerOf,
  parameterIndex,
} from '../../../src/wire/alpha-vantage/functions.js';
import { INDICATORS } from '../../../src/wire/alpha-vantage/indicators.js';
import { SERIES_FUNCTIONS } from '../../../src/wire/alpha-vantage/time-series.js';
import { demoQuery } from '../../helpers/alpha-vantage-demos.js';

test('the list names its source: the documentation page and the day it was read', () => {
  assert.equal(FUNCTIONS_SOURCE.page, 'https://www.alphavantage.co/documentation/');
  assert.match(FUNCTIONS_SOURCE.read, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(FUNCTIONS_SOURCE.via.length > 0);
});

test('each function once, upper-case, in a known family, with distinct parameters', () => {
  assert.equal(new Set(FUNCTION_NAMES).size, FUNCTION_NAMES.length);
  for (const f of ALPHA_VANTAGE_FUNCTIONS) {
    assert.match(f.name, /^[A-Z][A-Z0-9_]*$/);
    assert.ok(f.family in AV_FAMILIES, f.name);
    const params = [...f.required, ...f.optional];
    assert.equal(new Set(params).size, params.length, `${f.name} names a parameter twice`);
    for (const p of ['function', 'apikey', 'datatype']) assert.ok(!params.includes(p), `${f.name}: ${p} is not its own parameter`);
    for (const p of f.repeatable ?? []) assert.ok(params.includes(p), `${f.name}: repeatable ${p} is a parameter`);
    assert.equal(functionSpec(f.name), f);
  }
  assert.equal(functionSpec('NOT_A_FUNCTION'), undefined);
});

test('every family has a function; the families the issue names hold what it says', () => {
  const families = new Set(ALPHA_VANTAGE_FUNCTIONS.map((f) => f.family));
  assert.deepEqual([...families].sort(), Object.keys(AV_FAMILIES).sort());
  const familyOf = (name: string) => functionSpec(name)?.family;
  assert.equal(familyOf('OVERVIEW'), 'FUNDAMENTALS');
  assert.equal(familyOf('LISTING_STATUS'), 'LISTINGS');
  assert.equal(familyOf('EARNINGS_CALENDAR'), 'CALENDARS');
  assert.equal(familyOf('IPO_CALENDAR'), 'CALENDARS');
  assert.equal(familyOf('REAL_GDP'), 'ECONOMIC');
  assert.equal(familyOf('WTI'), 'COMMODITIES');
  assert.equal(familyOf('CURRENCY_EXCHANGE_RATE'), 'FX');
  assert.equal(familyOf('DIGITAL_CURRENCY_DAILY'), 'CRYPTO');
  assert.equal(familyOf('TIME_SERIES_INTRADAY'), 'INTRADAY');
  assert.equal(familyOf('NEWS_SENTIMENT'), 'NEWS');
  assert.equal(familyOf('REALTIME_OPTIONS'), 'OPTIONS');
});

test('the service owns the quote, the search, the stored series and the computed indicators, all listed', () => {
  const owned = FUNCTION_NAMES.filter((fn) => ownerOf(fn) !== undefined);
  assert.deepEqual(owned.sort(), ['GLOBAL_QUOTE', 'SYMBOL_SEARCH', ...SERIES_FUNCTIONS, ...INDICATORS].sort());
  assert.equal(ownerOf('OVERVIEW'), undefined);
});

test('premium flags carry their evidence; the CSV-only functions are the three the documentation names', () => {
  for (const f of ALPHA_VANTAGE_FUNCTIONS) assert.equal(f.premium, f.premiumEvidence !== undefined, f.name);
  assert.ok(functionSpec('TIME_SERIES_DAILY_ADJUSTED')?.premium);
  assert.ok(!functionSpec('TIME_SERIES_DAILY')?.premium);
  const csvOnly = ALPHA_VANTAGE_FUNCTIONS.filter((f) => f.formats === 'csv').map((f) => f.name);
  assert.deepEqual(csvOnly.sort(), ['EARNINGS_CALENDAR', 'IPO_CALENDAR', 'LISTING_STATUS']);
  for (const fn of ['GLOBAL_QUOTE', 'TIME_SERIES_DAILY', 'FX_DAILY', 'RSI', 'WTI']) assert.equal(functionSpec(fn)?.formats, 'both', fn);
});

test('every function has a demo call giving its required parameters and documented ones only', () => {
  for (const f of ALPHA_VANTAGE_FUNCTIONS) {
    const demo = demoQuery(f.name);
    assert.ok(demo, `${f.name} has a demo call`);
    const { function: fn, ...params } = demo;
    assert.equal(fn, f.name);
    for (const p of f.required) assert.ok(p in params, `${f.name} demo gives ${p}`);
    for (const p of Object.keys(params)) assert.ok([...f.required, ...f.optional].includes(p), `${f.name} takes ${p}`);
  }
});

test('the parameter index names each function taking a parameter', () => {
  const index = parameterIndex();
  assert.ok(index.get('symbol')?.includes('OVERVIEW'));
  assert.ok(index.get('from_currency')?.includes('CURRENCY_EXCHANGE_RATE'));
  assert.deepEqual(index.get('RANGE')?.sort(), ['ANALYTICS_FIXED_WINDOW', 'ANALYTICS_SLIDING_WINDOW']);
});
