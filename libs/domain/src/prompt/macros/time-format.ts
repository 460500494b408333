/**
 * The subset of moment.js (en locale) that ST's time macros use (reference §g: `{{time}}` = `LT`,
 * `{{date}}` = `LL`, `{{weekday}}` = `dddd`, `{{isotime}}` = `HH:mm`, `{{isodate}}` = `YYYY-MM-DD`,
 * `{{datetimeformat …}}` = any moment format, `{{idle_duration}}`/`{{timeDiff}}` = `duration.humanize()`).
 * The clock is never read: the instant and the timezone come from the caller.
 */

export interface WallClock {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  weekday: number; // 0 = Sunday
  offsetMinutes: number;
  epochMs: number;
}

const formatterCache = new Map<string, Intl.DateTimeFormat>();

/** True when `timeZone` is an IANA zone this runtime knows. */
export function isValidTimeZone(timeZone: string): boolean {
  try {
    zoneFormatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

function zoneFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatterCache.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatterCache.set(timeZone, formatter);
  }
  return formatter;
}

function fromUtcFields(epochMs: number, offsetMinutes: number): WallClock {
  const d = new Date(epochMs + offsetMinutes * 60000);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    millisecond: d.getUTCMilliseconds(),
    weekday: d.getUTCDay(),
    offsetMinutes,
    epochMs,
  };
}

/** Offset of `timeZone` from UTC at `epochMs`, in minutes (east positive, like moment's `utcOffset()`). */
export function zoneOffsetMinutes(epochMs: number, timeZone: string): number {
  const parts = zoneFormatter(timeZone).formatToParts(new Date(epochMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? '0');
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  const wholeSecond = Math.floor(epochMs / 1000) * 1000;
  return Math.round((asUtc - wholeSecond) / 60000);
}

/** The wall clock of an instant in an IANA zone. */
export function wallClockInZone(epochMs: number, timeZone: string): WallClock {
  return fromUtcFields(epochMs, zoneOffsetMinutes(epochMs, timeZone));
}

/** moment().utc().utcOffset(n): |n| < 16 is hours, otherwise minutes. */
export function wallClockAtUtcOffset(epochMs: number, offset: number): WallClock {
  const minutes = Math.abs(offset) < 16 ? offset * 60 : offset;
  return fromUtcFields(epochMs, minutes);
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const LONG_FORMATS: Record<string, string> = {
  LTS: 'h:mm:ss A',
  LT: 'h:mm A',
  L: 'MM/DD/YYYY',
  LL: 'MMMM D, YYYY',
  LLL: 'MMMM D, YYYY h:mm A',
  LLLL: 'dddd, MMMM D, YYYY h:mm A',
  l: 'M/D/YYYY',
  ll: 'MMM D, YYYY',
  lll: 'MMM D, YYYY h:mm A',
  llll: 'ddd, MMM D, YYYY h:mm A',
};

function pad(value: number, length: number): string {
  const sign = value < 0 ? '-' : '';
  return sign + String(Math.abs(value)).padStart(length, '0');
}

function ordinal(n: number): string {
  const b = n % 10;
  const suffix =
    Math.floor((n % 100) / 10) === 1 ? 'th' : b === 1 ? 'st' : b === 2 ? 'nd' : b === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

function dayOfYear(w: WallClock): number {
  return Math.round((Date.UTC(w.year, w.month - 1, w.day) - Date.UTC(w.year, 0, 1)) / 86400000) + 1;
}

/** ISO week number and ISO week year. */
function isoWeek(w: WallClock): { week: number; year: number } {
  const date = new Date(Date.UTC(w.year, w.month - 1, w.day));
  const dayNum = date.getUTCDay() || 7;
  date.setUTCDate(date.getUTCDate() + 4 - dayNum);
  const weekYear = date.getUTCFullYear();
  const yearStart = Date.UTC(weekYear, 0, 1);
  return { week: Math.ceil(((date.getTime() - yearStart) / 86400000 + 1) / 7), year: weekYear };
}

/** en-locale week (weeks start Sunday, week 1 contains Jan 1st) as moment's `w`. */
function localeWeek(w: WallClock): { week: number; year: number } {
  // moment en: dow 0, doy 6 → the week containing Jan 1st is week 1.
  const date = Date.UTC(w.year, w.month - 1, w.day);
  const weekStart = date - w.weekday * 86400000;
  const weekEnd = weekStart + 6 * 86400000;
  const yearOfWeek = new Date(weekEnd).getUTCFullYear();
  const jan1 = Date.UTC(yearOfWeek, 0, 1);
  const jan1Weekday = new Date(jan1).getUTCDay();
  const firstWeekStart = jan1 - jan1Weekday * 86400000;
  return { week: Math.floor((weekStart - firstWeekStart) / (7 * 86400000)) + 1, year: yearOfWeek };
}

function offsetString(minutes: number, separator: string): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60), 2)}${separator}${pad(abs % 60, 2)}`;
}

const TOKEN_PATTERN =
  /(\[[^[]*\])|(\\)?([Hh]mm(ss)?|Mo|MM?M?M?|Do|DDDo|DD?D?D?|ddd?d?|do?|w[o|w]?|W[o|W]?|Qo?|N{1,5}|YYYYYY|YYYYY|YYYY|YY|y{2,4}|yo?|gg(ggg?)?|GG(GGG?)?|e|E|a|A|hh?|HH?|kk?|mm?|ss?|S{1,9}|x|X|zz?|ZZ?|.)/g;
const LOCAL_TOKEN_PATTERN = /(\[[^[]*\])|(\\)?(LTS|LT|LL?L?L?|l{1,4})/g;

function expandLongFormats(format: string): string {
  let result = format;
  for (let i = 0; i < 5 && LOCAL_TOKEN_PATTERN.test(result); i++) {
    LOCAL_TOKEN_PATTERN.lastIndex = 0;
    result = result.replace(
      LOCAL_TOKEN_PATTERN,
      (match: string, _b: string | undefined, escaped: string | undefined, token: string) =>
        escaped || match.startsWith('[') ? match : (LONG_FORMATS[token] ?? token),
    );
  }
  LOCAL_TOKEN_PATTERN.lastIndex = 0;
  return result;
}

function hour12(hour: number): number {
  return hour % 12 || 12;
}

function formatToken(token: string, w: WallClock): string {
  switch (token) {
    case 'M':
      return String(w.month);
    case 'Mo':
      return ordinal(w.month);
    case 'MM':
      return pad(w.month, 2);
    case 'MMM':
      return MONTHS[w.month - 1].slice(0, 3);
    case 'MMMM':
      return MONTHS[w.month - 1];
    case 'Q':
      return String(Math.ceil(w.month / 3));
    case 'Qo':
      return ordinal(Math.ceil(w.month / 3));
    case 'D':
      return String(w.day);
    case 'Do':
      return ordinal(w.day);
    case 'DD':
      return pad(w.day, 2);
    case 'DDD':
      return String(dayOfYear(w));
    case 'DDDo':
      return ordinal(dayOfYear(w));
    case 'DDDD':
      return pad(dayOfYear(w), 3);
    case 'd':
      return String(w.weekday);
    case 'do':
      return ordinal(w.weekday);
    case 'dd':
      return WEEKDAYS[w.weekday].slice(0, 2);
    case 'ddd':
      return WEEKDAYS[w.weekday].slice(0, 3);
    case 'dddd':
      return WEEKDAYS[w.weekday];
    case 'e':
      return String(w.weekday);
    case 'E':
      return String(w.weekday === 0 ? 7 : w.weekday);
    case 'w':
      return String(localeWeek(w).week);
    case 'wo':
      return ordinal(localeWeek(w).week);
    case 'ww':
      return pad(localeWeek(w).week, 2);
    case 'W':
      return String(isoWeek(w).week);
    case 'Wo':
      return ordinal(isoWeek(w).week);
    case 'WW':
      return pad(isoWeek(w).week, 2);
    case 'YY':
      return pad(w.year % 100, 2);
    case 'YYYY':
      return w.year <= 9999 ? pad(w.year, 4) : `+${w.year}`;
    case 'YYYYY':
      return pad(w.year, 5);
    case 'YYYYYY':
      return (w.year < 0 ? '-' : '+') + pad(Math.abs(w.year), 6);
    case 'y':
    case 'yyyy':
      return String(w.year);
    case 'yy':
      return pad(w.year % 100, 2);
    case 'gg':
      return pad(localeWeek(w).year % 100, 2);
    case 'gggg':
      return pad(localeWeek(w).year, 4);
    case 'GG':
      return pad(isoWeek(w).year % 100, 2);
    case 'GGGG':
      return pad(isoWeek(w).year, 4);
    case 'A':
      return w.hour < 12 ? 'AM' : 'PM';
    case 'a':
      return w.hour < 12 ? 'am' : 'pm';
    case 'H':
      return String(w.hour);
    case 'HH':
      return pad(w.hour, 2);
    case 'h':
      return String(hour12(w.hour));
    case 'hh':
      return pad(hour12(w.hour), 2);
    case 'k':
      return String(w.hour || 24);
    case 'kk':
      return pad(w.hour || 24, 2);
    case 'hmm':
      return `${hour12(w.hour)}${pad(w.minute, 2)}`;
    case 'hmmss':
      return `${hour12(w.hour)}${pad(w.minute, 2)}${pad(w.second, 2)}`;
    case 'Hmm':
      return `${w.hour}${pad(w.minute, 2)}`;
    case 'Hmmss':
      return `${w.hour}${pad(w.minute, 2)}${pad(w.second, 2)}`;
    case 'm':
      return String(w.minute);
    case 'mm':
      return pad(w.minute, 2);
    case 's':
      return String(w.second);
    case 'ss':
      return pad(w.second, 2);
    case 'Z':
      return offsetString(w.offsetMinutes, ':');
    case 'ZZ':
      return offsetString(w.offsetMinutes, '');
    case 'X':
      return String(Math.floor(w.epochMs / 1000));
    case 'x':
      return String(w.epochMs);
    case 'z':
    case 'zz':
      return ''; // moment without moment-timezone has no zone abbreviation
    default:
      if (/^S{1,9}$/.test(token)) {
        const digits = pad(w.millisecond, 3) + '000000';
        return digits.slice(0, token.length);
      }
      return token;
  }
}

/** `moment(instant).format(format)` in the en locale. */
export function formatMoment(w: WallClock, format: string): string {
  const expanded = expandLongFormats(format);
  return expanded.replace(
    TOKEN_PATTERN,
    (match: string, bracket: string | undefined, escaped: string | undefined, token: string) => {
      if (bracket) return bracket.slice(1, -1);
      if (escaped) return match.slice(1);
      return formatToken(token, w);
    },
  );
}

/** moment `duration(ms).humanize(withSuffix)` (en, default thresholds). */
export function humanizeDuration(ms: number, withSuffix = false): string {
  if (!Number.isFinite(ms)) return 'Invalid date';
  const abs = Math.abs(ms);
  const seconds = Math.round(abs / 1000);
  const minutes = Math.round(abs / 60000);
  const hours = Math.round(abs / 3600000);
  const days = Math.round(abs / 86400000);
  const months = Math.round(((abs / 86400000) * 4800) / 146097);
  const years = Math.round(((abs / 86400000) * 400) / 146097);
  let text: string;
  if (seconds <= 44) text = 'a few seconds';
  else if (seconds < 45) text = `${seconds} seconds`;
  else if (minutes <= 1) text = 'a minute';
  else if (minutes < 45) text = `${minutes} minutes`;
  else if (hours <= 1) text = 'an hour';
  else if (hours < 22) text = `${hours} hours`;
  else if (days <= 1) text = 'a day';
  else if (days < 26) text = `${days} days`;
  else if (months <= 1) text = 'a month';
  else if (months < 11) text = `${months} months`;
  else if (years <= 1) text = 'a year';
  else text = `${years} years`;
  if (!withSuffix) return text;
  return ms > 0 ? `in ${text}` : `${text} ago`;
}

const ISO_LIKE =
  /^\s*([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?\s*$/i;

/**
 * `moment(text)` for the inputs `{{timeDiff}}` sees: ISO 8601 and `YYYY-MM-DD HH:mm[:ss]` in the context
 * timezone when no offset is given, otherwise the JavaScript date parser moment falls back to. NaN = invalid.
 */
export function parseMomentInput(text: string, timeZone: string): number {
  const m = ISO_LIKE.exec(text);
  if (m) {
    const [, y, mo, d, h, mi, s, frac, zone] = m;
    const fields = Date.UTC(
      Number(y),
      Number(mo) - 1,
      Number(d),
      Number(h ?? 0),
      Number(mi ?? 0),
      Number(s ?? 0),
      Number((frac ?? '0').padEnd(3, '0').slice(0, 3)),
    );
    if (Number.isNaN(fields)) return NaN;
    if (zone) {
      if (zone.toUpperCase() === 'Z') return fields;
      const sign = zone.startsWith('-') ? -1 : 1;
      const digits = zone.slice(1).replace(':', '');
      const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
      return fields - sign * offset * 60000;
    }
    // Local time in the zone: correct by the zone offset at that instant (twice for DST edges).
    let guess = fields - zoneOffsetMinutes(fields, timeZone) * 60000;
    guess = fields - zoneOffsetMinutes(guess, timeZone) * 60000;
    return guess;
  }
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? NaN : parsed;
}
