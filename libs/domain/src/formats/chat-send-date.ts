/**
 * `send_date` of ST chat lines (external-formats.md §a): Unix milliseconds (a number or an all-digit
 * string; ST treats every number as ms), ISO 8601, `Month D, YYYY h:mmam/pm` and the humanized
 * `YYYY-M-D@HHhMMmSSs[mmm ms]` forms. Text without a zone is read as UTC (ST read it in the browser's zone,
 * which a file does not record). Anything else is null, and the importer falls back to "now".
 */
export function parseSendDate(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? msOrNull(Math.trunc(value)) : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (/^\d{1,16}$/.test(text)) return msOrNull(Number(text));
  return parseIso(text) ?? parseMonthText(text) ?? parseHumanized(text);
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const MONTH_TEXT =
  /^([a-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?)?$/i;
const HUMANIZED =
  /^(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*(\d{1,3})\s*ms)?$/i;

function parseIso(text: string): number | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3) || 0);
  const utc = utcOrNull(+y, +mo, +d, +h, +mi, +s, ms);
  if (utc === null) return null;
  if (!zone || zone.toUpperCase() === 'Z') return utc;
  const zm = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!zm) return null;
  const offset = (Number(zm[2]) * 60 + Number(zm[3] ?? 0)) * 60_000;
  if (Number(zm[2]) > 23 || Number(zm[3] ?? 0) > 59) return null;
  return zm[1] === '+' ? utc - offset : utc + offset;
}

function parseMonthText(text: string): number | null {
  const m = MONTH_TEXT.exec(text);
  if (!m) return null;
  const [, name, d, y, h, mi, s, meridiem] = m;
  const lower = name.toLowerCase();
  const month = MONTHS.findIndex((full) => full === lower || (lower.length === 3 && full.startsWith(lower)));
  if (month < 0) return null;
  let hour = h === undefined ? 0 : Number(h);
  if (meridiem) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (meridiem.toLowerCase() === 'pm' ? 12 : 0);
  }
  return utcOrNull(+y, month + 1, +d, hour, Number(mi ?? 0), Number(s ?? 0), 0);
}

function parseHumanized(text: string): number | null {
  const m = HUMANIZED.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, ms] = m;
  return utcOrNull(+y, +mo, +d, +h, +mi, +s, Number(ms ?? 0));
}

/** Date.UTC of a calendar date that really exists (no rollover of 31 February or 25:00), else null. */
function utcOrNull(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  ms: number,
): number | null {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  if (new Date(utc).getUTCDate() !== d) return null;
  return msOrNull(utc);
}

function msOrNull(ms: number): number | null {
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : null;
}
