import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { compareVersions, isPrerelease, isValidVersion, normalizeVersion, parseVersion } from "../../src/site/releases/rules/versions";
import { runs, trickyString } from "./arbitraries";

const num = fc.oneof(
  { weight: 6, arbitrary: fc.nat(12).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("0", "00", "007", "10", "9007199254740993", "99999999999999999999", "18446744073709551616") },
);
const ident = fc.oneof(num, fc.constantFrom("alpha", "beta", "rc", "Beta", "x-y", "-", "pre12", "pre8", "1a"));
const release = fc.array(num, { minLength: 1, maxLength: 5 });

/** Version-like strings: valid ones of every shape, near misses, and anything at all. */
const versionString = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.constantFrom("", "", "v", "V"),
        release,
        fc.option(fc.array(ident, { minLength: 1, maxLength: 3 }), { nil: undefined }),
        fc.option(fc.array(fc.constantFrom("b", "7", "sha", "x-1"), { minLength: 1, maxLength: 2 }), { nil: undefined }),
        fc.constantFrom("", "", " ", "\t", "\n"),
      )
      .map(([v, r, pre, build, pad]) => `${pad}${v}${r.join(".")}${pre ? "-" + pre.join(".") : ""}${build ? "+" + build.join(".") : ""}${pad}`),
  },
  { weight: 1, arbitrary: fc.constantFrom("", "v", "1.", ".1", "1..2", "1.2.3-", "1.2.3+", "1.2.3-a..b", "latest", "-1", "1,2", "1.2.3-bêta", "１.２") },
  { weight: 1, arbitrary: trickyString },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
);

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

describe("version parsing and ordering", () => {
  test("parse never throws, on any string or any value, and what it accepts is well formed", () => {
    fc.assert(
      fc.property(fc.oneof(versionString, fc.string({ unit: "binary", maxLength: 40 }), fc.anything()), (input) => {
        const p = parseVersion(input as string);
        expect(isValidVersion(input as string)).toBe(p !== null);
        if (p === null) return;
        expect(p.release.length).toBeGreaterThan(0);
        for (const n of p.release) expect(typeof n === "bigint" && n >= 0n).toBe(true);
        for (const id of p.prerelease) expect(typeof id === "bigint" || (typeof id === "string" && /^[0-9A-Za-z-]+$/.test(id))).toBe(true);
        expect(isPrerelease(input as string)).toBe(p.prerelease.length > 0);
      }),
      runs(800),
    );
  });

  test("compare is reflexive and antisymmetric, and only ever says -1, 0 or 1", () => {
    fc.assert(
      fc.property(versionString, versionString, (a, b) => {
        expect(compareVersions(a, a)).toBe(0);
        const ab = compareVersions(a, b);
        expect([-1, 0, 1]).toContain(ab);
        expect(sign(compareVersions(b, a))).toBe(ab === 0 ? 0 : -ab);
      }),
      runs(800),
    );
  });

  test("compare is transitive (for < and for ==)", () => {
    fc.assert(
      fc.property(versionString, versionString, versionString, (a, b, c) => {
        const [x, y, z] = [a, b, c].sort(compareVersions);
        expect(compareVersions(x, y)).toBeLessThanOrEqual(0);
        expect(compareVersions(y, z)).toBeLessThanOrEqual(0);
        expect(compareVersions(x, z)).toBeLessThanOrEqual(0);
        if (compareVersions(x, y) === 0 && compareVersions(y, z) === 0) expect(compareVersions(x, z)).toBe(0);
        if (compareVersions(x, y) < 0 || compareVersions(y, z) < 0) expect(compareVersions(x, z)).toBe(-1);
      }),
      runs(800),
    );
  });

  test("sorting is deterministic: any permutation of a list sorts to the same order of equivalence classes", () => {
    fc.assert(
      fc.property(fc.array(versionString, { maxLength: 12 }).chain((l) => fc.tuple(fc.constant(l), fc.shuffledSubarray(l, { minLength: l.length }))), ([list, shuffled]) => {
        const a = [...list].sort(compareVersions);
        const b = [...shuffled].sort(compareVersions);
        a.forEach((v, i) => expect(compareVersions(v, b[i])).toBe(0));
      }),
      runs(400),
    );
  });

  test("numeric parts compare as integers, missing parts as 0; v, padding and build metadata do not count", () => {
    const part = fc.oneof(fc.bigInt({ min: 0n, max: 20n }), fc.bigInt({ min: 2n ** 53n - 2n, max: 10n ** 22n }));
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 5 }), fc.array(part, { minLength: 1, maxLength: 5 }), (xs, ys) => {
        const n = Math.max(xs.length, ys.length);
        let want = 0;
        for (let i = 0; i < n && want === 0; i++) {
          const x = xs[i] ?? 0n;
          const y = ys[i] ?? 0n;
          want = x < y ? -1 : x > y ? 1 : 0;
        }
        const a = xs.join(".");
        const b = ys.join(".");
        expect(compareVersions(a, b)).toBe(want);
        expect(compareVersions(a, `${a}.0.0`)).toBe(0);
        // Neighbours beyond Number precision stay apart.
        const last = xs[xs.length - 1];
        expect(compareVersions(a, [...xs.slice(0, -1), last + 1n].join("."))).toBe(-1);
        expect(compareVersions(` v${a}+build.1 `, `V${b}`)).toBe(want);
        // A pre-release sorts just below its release, and above every lower release.
        expect(compareVersions(`${a}-rc.1`, a)).toBe(-1);
        if (want > 0) expect(compareVersions(`${a}-rc.1`, b)).toBe(1);
      }),
      runs(500),
    );
  });

  test("pre-releases follow SemVer precedence (an independent reading of its rule 11.4)", () => {
    const id = fc.oneof(fc.bigInt({ min: 0n, max: 12n }).map(String), fc.constantFrom("alpha", "beta", "Beta", "rc", "x-y", "1a", "-", "99999999999999999999"));
    /** Identifiers compare numerically when both are digits, digits below others, others in ASCII order; a longer list wins a tie. */
    function precedence(a: string[], b: string[]): number {
      for (let i = 0; i < Math.min(a.length, b.length); i++) {
        const [x, y] = [a[i], b[i]];
        const [nx, ny] = [/^\d+$/.test(x), /^\d+$/.test(y)];
        if (nx && ny) {
          if (BigInt(x) !== BigInt(y)) return BigInt(x) < BigInt(y) ? -1 : 1;
        } else if (nx !== ny) return nx ? -1 : 1;
        else if (x !== y) return x < y ? -1 : 1;
      }
      return sign(a.length - b.length);
    }
    fc.assert(
      fc.property(fc.array(id, { minLength: 1, maxLength: 4 }), fc.array(id, { minLength: 1, maxLength: 4 }), (a, b) => {
        expect(compareVersions(`1.2.3-${a.join(".")}`, `1.2.3-${b.join(".")}`)).toBe(precedence(a, b));
        expect(compareVersions(`1.2.3-${a.join(".")}`, "1.2.3")).toBe(-1);
      }),
      runs(600),
    );
  });

  test("every valid version sorts above every invalid one; normalising keeps validity and order, and is idempotent", () => {
    fc.assert(
      fc.property(versionString, versionString, (a, b) => {
        if (isValidVersion(a) && !isValidVersion(b)) expect(compareVersions(a, b)).toBe(1);
        const na = normalizeVersion(a);
        expect(normalizeVersion(na)).toBe(na);
        expect(na).toBe(isValidVersion(a) ? a.trim().replace(/^[vV]/, "") : a.trim());
        expect(isValidVersion(na)).toBe(isValidVersion(a));
        if (isValidVersion(a) && isValidVersion(b)) expect(compareVersions(na, normalizeVersion(b))).toBe(compareVersions(a, b));
      }),
      runs(600),
    );
  });
});
