import assert from 'node:assert/strict';
import { test } from 'node:test';
import { displayName } from '../../../src/upstreams/yahoo/display-name.js';
import { recording } from '../../helpers/recorded.js';

const metaOf = (name: string) => (recording('yahoo', name).json as any).chart.result[0].meta;
const nameOf = (name: string) => {
  const meta = metaOf(name);
  return displayName(meta.shortName, meta.longName, meta.symbol);
};

test('recorded shortNames that are no name give way to longName: the symbol itself, a field padded with a fragment', () => {
  assert.equal(metaOf('chart-fund-0p000071w8-to-period-2020-01-01-to-03-1d').shortName, '0P000071W8.TO');
  assert.equal(nameOf('chart-fund-0p000071w8-to-period-2020-01-01-to-03-1d'), 'TD US Index e');
  assert.equal(metaOf('chart-wsu-de-period-2023-08-04-to-09-1d').shortName, 'WashTec AG                    I');
  assert.equal(nameOf('chart-wsu-de-period-2023-08-04-to-09-1d'), 'WashTec AG');
});

test('recorded plain shortNames stay, truncated or not; longName when there is no shortName', () => {
  assert.equal(nameOf('chart-aapl-period-2022-02-22-1d'), 'Apple Inc.');
  assert.equal(nameOf('chart-mutual-fund-0p0000xts7-period-1d-stale'), 'Goldman Sachs US$ Liquid Reserv');
  assert.equal(nameOf('chart-gc-f-period-2020-01-02-1d'), 'Gold Apr 25');
  assert.equal(nameOf('chart-lucyw-null-currency-empty-holiday-1d'), 'Innovative Eyewear, Inc.');
  assert.equal(nameOf('chart-aapl-1d-1d'), null, 'neither name sent');
});

test('a list of symbols or stray punctuation is no name; a name with commas, digits or an ampersand is', () => {
  assert.equal(displayName('VFIAX, VFINX', 'Vanguard 500 Index Fund Admiral', 'VFIAX'), 'Vanguard 500 Index Fund Admiral');
  assert.equal(displayName('^GSPC,^DJI,^IXIC', null, '^GSPC'), null);
  assert.equal(displayName('",', 'Apple Inc.', 'AAPL'), 'Apple Inc.');
  assert.equal(displayName('Apple Inc.",', 'Apple Inc.', 'AAPL'), 'Apple Inc.');
  assert.equal(displayName('aapl', undefined, 'AAPL'), null, 'the symbol in any case');
  for (const plain of ['Innovative Eyewear, Inc.', '3M Company', 'AT&T Inc.', 'S&P 500', 'Bitcoin USD'])
    assert.equal(displayName(plain, 'other', 'X'), plain);
});
