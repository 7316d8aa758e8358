import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXCHANGE_SUFFIXES, yahooSymbol } from '../../../src/upstreams/yahoo/yahoo-symbols.js';

test("Alpha Vantage symbols in Yahoo's convention: share classes, exchange suffixes, plain US tickers", () => {
  for (const [av, yahoo] of [
    ['IBM', 'IBM'],
    ['brk.b', 'BRK-B'],
    ['BF.B', 'BF-B'],
    ['TSCO.LON', 'TSCO.L'],
    ['SHOP.TRT', 'SHOP.TO'],
    ['SAP.DEX', 'SAP.DE'],
    ['MC.PAR', 'MC.PA'],
    ['RELIANCE.BSE', 'RELIANCE.BO'],
    ['600104.SHH', '600104.SS'],
    ['BBD.B.TRT', 'BBD-B.TO'],
  ]) {
    assert.equal(yahooSymbol(av as string), yahoo, av);
  }
});

test('symbols without a sure mapping are left alone (the fallback does not guess)', () => {
  for (const symbol of ['^GSPC', 'GC=F', 'EURUSD=X', 'ABC.XYZ', 'BRK/B', 'A.LONG', '.LON', 'X..LON'])
    assert.equal(yahooSymbol(symbol), undefined, symbol);
});

test('every exchange code maps to a distinct Yahoo suffix', () => {
  const suffixes = Object.values(EXCHANGE_SUFFIXES);
  assert.equal(new Set(suffixes).size, suffixes.length);
});
