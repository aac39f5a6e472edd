/**
 * The one rule for times an operator types (key validity, announcement windows): ISO 8601 with a date, a time
 * and a zone (`Z` or `±hh:mm`). A time without a zone would be read in the server's own zone and a bare date is
 * midnight somewhere unsaid, so both are refused rather than guessed.
 */
const ZONED = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))$/i;

/** Milliseconds since the epoch, or null when `text` is not a zoned ISO 8601 date-time of a real calendar day. */
export function parseZonedTime(text: string): number | null {
  const m = ZONED.exec(text.trim());
  if (!m) return null;
  const [, year, month, day, hour, minute, second = "0", zoneHours = "0", zoneMinutes = "0"] = m;
  const n = Number;
  // Date.parse rolls 2025-02-30 over into March; a date that is not on the calendar is a typo, not a time.
  const daysInMonth = new Date(Date.UTC(n(year), n(month), 0)).getUTCDate();
  if (n(month) < 1 || n(month) > 12 || n(day) < 1 || n(day) > daysInMonth) return null;
  if (n(hour) > 23 || n(minute) > 59 || n(second) > 59 || n(zoneHours) > 23 || n(zoneMinutes) > 59) return null;
  const ms = Date.parse(text.trim());
  return Number.isNaN(ms) ? null : ms;
}

export const ZONED_TIME_EXAMPLE = "2026-01-01T08:00:00Z or 2026-01-01T08:00:00+08:00";
