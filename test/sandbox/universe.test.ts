import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNIVERSE, findInstrument } from '../../src/sandbox/universe.js';

test('the universe holds a few hundred distinct, well-formed instruments', () => {
  assert.ok(UNIVERSE.length >= 300, `only ${UNIVERSE.length} instruments`);
  assert.equal(new Set(UNIVERSE.map((i) => i.symbol)).size, UNIVERSE.length, 'duplicate symbols');
  for (const i of UNIVERSE) {
    assert.match(i.symbol, /^[A-Z]{1,5}(\.[A-Z])?$/, i.symbol);
    assert.ok(i.name.trim().length > 0, `${i.symbol} has no name`);
    assert.ok(['NASDAQ', 'NYSE', 'ARCA'].includes(i.exchange), `${i.symbol} exchange ${i.exchange}`);
    assert.ok(['stock', 'etf'].includes(i.kind));
    assert.ok([0, 1, 2, 4, 12].includes(i.dividend.frequency), `${i.symbol} frequency ${i.dividend.frequency}`);
    assert.ok(i.dividend.yield >= 0 && i.dividend.yield < 0.2, `${i.symbol} yield ${i.dividend.yield}`);
    assert.equal(i.dividend.yield === 0, i.dividend.frequency === 0, `${i.symbol}: a payer needs a frequency, a non-payer none`);
  }
});

test('it covers the well-known names, ETFs and dotted share classes', () => {
  for (const s of [
    'AAPL',
    'MSFT',
    'NVDA',
    'AMZN',
    'GOOGL',
    'META',
    'TSLA',
    'JPM',
    'KO',
    'IBM',
    'SPY',
    'QQQ',
    'IWM',
    'DIA',
    'BRK.B',
    'BF.B',
  ]) {
    assert.ok(findInstrument(s) !== undefined, `${s} missing`);
  }
  assert.equal(findInstrument('SPY')?.kind, 'etf');
  assert.equal(findInstrument('SPY')?.exchange, 'ARCA');
  assert.equal(findInstrument('AAPL')?.exchange, 'NASDAQ');
  assert.equal(findInstrument('KO')?.dividend.frequency, 4);
  assert.equal(findInstrument('O')?.dividend.frequency, 12);
  assert.equal(findInstrument('TSLA')?.dividend.yield, 0);
  assert.ok(UNIVERSE.some((i) => i.dividend.frequency === 1) && UNIVERSE.some((i) => i.dividend.frequency === 2));
});

test("lookups ignore case and accept other providers' share-class spellings", () => {
  assert.equal(findInstrument('aapl')?.symbol, 'AAPL');
  assert.equal(findInstrument(' msft ')?.name, 'Microsoft Corporation');
  for (const spelling of ['BRK.B', 'brk.b', 'BRK-B', 'BRK/B', 'BRK B']) assert.equal(findInstrument(spelling)?.symbol, 'BRK.B', spelling);
  assert.equal(findInstrument('bf-b')?.symbol, 'BF.B');
  assert.equal(findInstrument('NOPE'), undefined);
  assert.equal(findInstrument(''), undefined);
  assert.equal(findInstrument('ZZZZZ'), undefined);
});

test('the shared table cannot be changed by one simulator under the others', () => {
  const apple = findInstrument('AAPL');
  assert.throws(() => {
    (apple as { name: string }).name = 'changed';
  }, TypeError);
  assert.throws(() => {
    (UNIVERSE as unknown as unknown[]).push({});
  }, TypeError);
});
