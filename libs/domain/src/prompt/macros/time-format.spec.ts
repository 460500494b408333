import {
  formatMoment,
  humanizeDuration,
  parseMomentInput,
  wallClockAtUtcOffset,
  wallClockInZone,
} from './time-format';

const NOW = Date.UTC(2026, 10, 21, 21, 9, 5, 7); // Saturday

describe('moment subset used by the time macros (§g7)', () => {
  const utc = wallClockInZone(NOW, 'UTC');
  it.each([
    ['LT', '9:09 PM'],
    ['LTS', '9:09:05 PM'],
    ['L', '11/21/2026'],
    ['LL', 'November 21, 2026'],
    ['LLL', 'November 21, 2026 9:09 PM'],
    ['LLLL', 'Saturday, November 21, 2026 9:09 PM'],
    ['llll', 'Sat, Nov 21, 2026 9:09 PM'],
    ['YYYY-MM-DD HH:mm:ss.SSS', '2026-11-21 21:09:05.007'],
    ['YY M D H h m s a', '26 11 21 21 9 9 5 pm'],
    ['Do MMM dddd ddd dd d E', '21st Nov Saturday Sat Sa 6 6'],
    ['Q Qo DDD DDDD', '4 4th 325 325'],
    ['W WW', '47 47'],
    ['[Today is] dddd', 'Today is Saturday'],
    ['X', String(Math.floor(NOW / 1000))],
    ['x', String(NOW)],
    ['Z ZZ', '+00:00 +0000'],
    ['kk:mm', '21:09'],
    ['w ww gggg GGGG', '47 47 2026 2026'],
  ])('format %j', (format, expected) => {
    expect(formatMoment(utc, format)).toBe(expected);
  });

  it('uses the zone offset, including half-hour zones and DST', () => {
    expect(formatMoment(wallClockInZone(NOW, 'Asia/Kolkata'), 'YYYY-MM-DD HH:mm Z')).toBe(
      '2026-11-22 02:39 +05:30',
    );
    expect(formatMoment(wallClockInZone(Date.UTC(2026, 6, 1, 12), 'America/New_York'), 'HH:mm Z')).toBe(
      '08:00 -04:00',
    );
    expect(formatMoment(wallClockInZone(Date.UTC(2026, 0, 1, 12), 'America/New_York'), 'HH:mm Z')).toBe(
      '07:00 -05:00',
    );
  });

  it('utcOffset: |n| < 16 means hours, otherwise minutes (moment)', () => {
    expect(formatMoment(wallClockAtUtcOffset(NOW, 2), 'HH:mm')).toBe('23:09');
    expect(formatMoment(wallClockAtUtcOffset(NOW, -90), 'HH:mm')).toBe('19:39');
  });

  it.each([
    [0, 'a few seconds'],
    [44_000, 'a few seconds'],
    [45_000, 'a minute'],
    [89_000, 'a minute'],
    [90_000, '2 minutes'],
    [44 * 60_000, '44 minutes'],
    [45 * 60_000, 'an hour'],
    [3 * 3600_000, '3 hours'],
    [21 * 3600_000, '21 hours'],
    [22 * 3600_000, 'a day'],
    [36 * 3600_000, '2 days'],
    [25 * 86400_000, '25 days'],
    [26 * 86400_000, 'a month'],
    [60 * 86400_000, '2 months'],
    [300 * 86400_000, '10 months'],
    [320 * 86400_000, 'a year'],
    [345 * 86400_000, 'a year'],
    [800 * 86400_000, '2 years'],
  ])('humanize(%d ms) = %j (moment thresholds)', (ms, expected) => {
    expect(humanizeDuration(ms)).toBe(expected);
    expect(humanizeDuration(-ms)).toBe(expected);
  });

  it('humanize with suffix', () => {
    expect(humanizeDuration(3 * 3600_000, true)).toBe('in 3 hours');
    expect(humanizeDuration(-3 * 3600_000, true)).toBe('3 hours ago');
    expect(humanizeDuration(NaN)).toBe('Invalid date');
  });

  it('parses ISO-like inputs in the given zone, explicit offsets as given, invalid as NaN', () => {
    expect(parseMomentInput('2023-01-01 12:00:00', 'UTC')).toBe(Date.UTC(2023, 0, 1, 12));
    expect(parseMomentInput('2023-01-01T12:00', 'America/New_York')).toBe(Date.UTC(2023, 0, 1, 17));
    expect(parseMomentInput('2023-01-01T12:00:00+02:00', 'UTC')).toBe(Date.UTC(2023, 0, 1, 10));
    expect(parseMomentInput('2023-01-01', 'UTC')).toBe(Date.UTC(2023, 0, 1));
    expect(Number.isNaN(parseMomentInput('not a date', 'UTC'))).toBe(true);
  });
});
