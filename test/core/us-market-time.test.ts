import assert from 'node:assert/strict';
import { test } from 'node:test';
import { easternMinute, easternOffsetMs, inExtendedSession, usTradingDay } from '../../src/core/us-market-time.js';

const HOUR = 3_600_000;

test('US/Eastern switches to daylight time on the second Sunday of March and back on the first of November', () => {
  assert.equal(easternOffsetMs(Date.parse('2024-03-10T06:59:00Z')), -5 * HOUR);
  assert.equal(easternOffsetMs(Date.parse('2024-03-10T07:00:00Z')), -4 * HOUR);
  assert.equal(easternOffsetMs(Date.parse('2024-11-03T05:59:00Z')), -4 * HOUR);
  assert.equal(easternOffsetMs(Date.parse('2024-11-03T06:00:00Z')), -5 * HOUR);
  assert.equal(easternOffsetMs(Date.parse('2025-01-15T12:00:00Z')), -5 * HOUR);
  assert.equal(easternOffsetMs(Date.parse('2025-07-15T12:00:00Z')), -4 * HOUR);
});

test('it agrees with the platform time-zone database over a year of hours', () => {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/New_York',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  for (let t = Date.parse('2025-01-01T00:30:00Z'); t < Date.parse('2026-01-01T00:00:00Z'); t += 7 * HOUR) {
    const parts = Object.fromEntries(format.formatToParts(t).map((p) => [p.type, p.value]));
    assert.equal(easternMinute(t), `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`);
  }
});

test('the extended session runs 04:00 to 20:00 Eastern on weekdays', () => {
  assert.equal(inExtendedSession(Date.parse('2024-05-10T08:00:00Z')), true); // Fri 04:00 EDT
  assert.equal(inExtendedSession(Date.parse('2024-05-10T07:59:00Z')), false);
  assert.equal(inExtendedSession(Date.parse('2024-05-10T23:59:00Z')), true); // 19:59
  assert.equal(inExtendedSession(Date.parse('2024-05-11T00:00:00Z')), false); // 20:00
  assert.equal(inExtendedSession(Date.parse('2024-05-11T15:00:00Z')), false); // Saturday
});

test('a trading day keeps New York hours across daylight saving: 09:30 to 16:00, extended 04:00 to 20:00', () => {
  const summer = usTradingDay(Date.parse('2024-05-10T00:00:00Z'));
  assert.deepEqual(summer, {
    date: '2024-05-10',
    preOpen: Date.parse('2024-05-10T08:00:00Z'),
    open: Date.parse('2024-05-10T13:30:00Z'),
    close: Date.parse('2024-05-10T20:00:00Z'),
    postClose: Date.parse('2024-05-11T00:00:00Z'),
  });
  const winter = usTradingDay(Date.parse('2024-11-04T00:00:00Z'));
  assert.equal(winter.open, Date.parse('2024-11-04T14:30:00Z'));
  assert.equal(winter.close, Date.parse('2024-11-04T21:00:00Z'));
});
