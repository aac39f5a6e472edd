/**
 * `Range` header parsing for downloads (RFC 9110 §14). The download handler turns the result into 200, 206
 * (single part or multipart/byteranges) or 416.
 */

export interface ByteRange {
  /** Inclusive offsets into the representation. */
  start: number;
  end: number;
}

export type RangeResult = { kind: "none" } | { kind: "ranges"; ranges: ByteRange[] } | { kind: "unsatisfiable" };

export interface RangeOptions {
  /**
   * More range-specs than this and the header is ignored (full 200), which RFC 9110 allows. electron-updater's
   * differential download sends up to 1000 ranges per request, so the default lets that through.
   */
  maxRanges?: number;
}

const DEFAULT_MAX_RANGES = 1000;
const NONE: RangeResult = { kind: "none" };

/**
 * Decisions:
 * - Syntax errors (a bad spec anywhere, `last < first`, a unit other than `bytes`) make the whole header
 *   ignored: RFC 9110 says an invalid Range is ignored, never answered with 416.
 * - Unsatisfiable specs are dropped; 416 only when none is left.
 * - Ranges are kept in the order asked for when no two overlap (electron-updater matches parts to requests by
 *   order). When any two overlap they are sorted and merged, so `bytes=0-,0-,0-...` cannot multiply the
 *   response size.
 * - Digit strings too long for an exact Number become huge or Infinity: such a start is unsatisfiable, such
 *   an end or suffix length is clamped to the size. No exceptions.
 * - A zero-length representation: a non-zero suffix range is satisfiable but selects nothing, so "none"
 *   (a plain 200 with an empty body); anything else is 416.
 */
export function parseRange(header: string | null | undefined, size: number, options: RangeOptions = {}): RangeResult {
  if (header == null) return NONE;
  const eq = header.indexOf("=");
  if (eq < 0 || header.slice(0, eq).trim().toLowerCase() !== "bytes") return NONE;

  // A list may contain empty elements (RFC 9110 §5.6.1); they are skipped.
  const specs = header
    .slice(eq + 1)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (specs.length === 0) return NONE;
  if (specs.length > (options.maxRanges ?? DEFAULT_MAX_RANGES)) return NONE;

  const ranges: ByteRange[] = [];
  let sawEmptyOkSuffix = false;
  for (const spec of specs) {
    const m = /^(\d*)-(\d*)$/.exec(spec);
    if (!m || (m[1] === "" && m[2] === "")) return NONE;
    if (m[1] === "") {
      const suffix = Number(m[2]);
      if (suffix === 0) continue;
      if (size === 0) {
        sawEmptyOkSuffix = true;
        continue;
      }
      ranges.push({ start: Math.max(0, size - suffix), end: size - 1 });
      continue;
    }
    // Compared as digit strings: past 2^53 two different numbers can round to the same Number.
    if (m[2] !== "" && digitsLess(m[2], m[1])) return NONE;
    const first = Number(m[1]);
    const last = m[2] === "" ? Infinity : Number(m[2]);
    if (first >= size) continue;
    ranges.push({ start: first, end: Math.min(last, size - 1) });
  }

  if (ranges.length === 0) return sawEmptyOkSuffix ? NONE : { kind: "unsatisfiable" };
  return { kind: "ranges", ranges: overlaps(ranges) ? coalesce(ranges) : ranges };
}

/** `a < b` for non-empty digit strings of any length, exactly. */
function digitsLess(a: string, b: string): boolean {
  const x = a.replace(/^0+(?=\d)/, "");
  const y = b.replace(/^0+(?=\d)/, "");
  return x.length !== y.length ? x.length < y.length : x < y;
}

function overlaps(ranges: ByteRange[]): boolean {
  if (ranges.length < 2) return false;
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].start <= sorted[i - 1].end) return true;
  }
  return false;
}

/** Sorted, with overlapping and touching ranges joined. */
function coalesce(ranges: ByteRange[]): ByteRange[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: ByteRange[] = [{ ...sorted[0] }];
  for (const r of sorted.slice(1)) {
    const last = out[out.length - 1];
    if (r.start <= last.end + 1) last.end = Math.max(last.end, r.end);
    else out.push({ ...r });
  }
  return out;
}

/** `Content-Range` of a 206 part. */
export function contentRange(start: number, end: number, size: number): string {
  return `bytes ${start}-${end}/${size}`;
}

/** `Content-Range` of a 416. */
export function unsatisfiedContentRange(size: number): string {
  return `bytes */${size}`;
}
