/**
 * Loose dotted-numeric versions: `1.2`, `v1.2.3.4`, `1.0.0-beta.2+build.7`. Release parts compare as integers
 * with missing parts counted as 0 (`1.10.0 > 1.9.0`, `v1.2 == 1.2.0`); the pre-release suffix follows SemVer
 * precedence; build metadata is ignored (as node-semver `compare` does, unlike Rust's derived `Ord`).
 */

export interface ParsedVersion {
  /** Numeric parts as bigint so a 20-digit part neither crashes nor silently rounds. */
  release: bigint[];
  /** Pre-release identifiers: numbers for all-digit ids, strings otherwise; [] = a release. */
  prerelease: Array<bigint | string>;
  build: string[];
}

/** Longer strings are refused: a version is a short label, and this bounds the work per comparison. */
const MAX_LENGTH = 256;

const IDENT = "[0-9A-Za-z-]+";
const VERSION_RE = new RegExp(
  `^[vV]?(\\d+(?:\\.\\d+)*)(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+(${IDENT}(?:\\.${IDENT})*))?$`,
);

export function parseVersion(input: string): ParsedVersion | null {
  if (typeof input !== "string") return null;
  const s = input.trim();
  if (s.length === 0 || s.length > MAX_LENGTH) return null;
  const m = VERSION_RE.exec(s);
  if (!m) return null;
  return {
    release: m[1].split(".").map((p) => BigInt(p)),
    // Leading zeros (`pre.01`) are invalid in strict SemVer; we read them as numbers rather than reject a tag
    // someone already shipped.
    prerelease: m[2] ? m[2].split(".").map((id) => (/^\d+$/.test(id) ? BigInt(id) : id)) : [],
    build: m[3] ? m[3].split(".") : [],
  };
}

export function isValidVersion(input: string): boolean {
  return parseVersion(input) !== null;
}

/** The version as documents show it: trimmed, without the leading `v`; invalid input is returned trimmed. */
export function normalizeVersion(input: string): string {
  const s = input.trim();
  return parseVersion(s) && (s[0] === "v" || s[0] === "V") ? s.slice(1) : s;
}

export function compareParsed(a: ParsedVersion, b: ParsedVersion): number {
  const n = Math.max(a.release.length, b.release.length);
  for (let i = 0; i < n; i++) {
    const x = a.release[i] ?? 0n;
    const y = b.release[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  return comparePrerelease(a.prerelease, b.prerelease);
}

function comparePrerelease(a: Array<bigint | string>, b: Array<bigint | string>): number {
  // A release outranks any of its pre-releases.
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : a.length === 0 ? 1 : -1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === "bigint" && typeof y === "bigint") {
      if (x !== y) return x < y ? -1 : 1;
    } else if (typeof x === "bigint") {
      return -1;
    } else if (typeof y === "bigint") {
      return 1;
    } else if (x !== y) {
      // SemVer says ASCII order, so no localeCompare.
      return x < y ? -1 : 1;
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Total order for sorting: invalid versions sort below every valid one (so a junk tag can never become
 * "latest"), and among themselves by plain string order so the result stays deterministic.
 */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (pa && pb) return compareParsed(pa, pb);
  if (pa) return 1;
  if (pb) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function isPrerelease(input: string): boolean {
  const p = parseVersion(input);
  return p !== null && p.prerelease.length > 0;
}

/** The key that makes `v1.2.0` and `1.2.0` the same release. */
export function versionKey(version: string): string {
  return normalizeVersion(version).toLowerCase();
}
