import { describe, expect, test } from "bun:test";
import { compareVersions, isPrerelease, isValidVersion, normalizeVersion, parseVersion } from "../../src/site/releases/rules/versions";

const sign = (n: number) => Math.sign(n);

describe("compareVersions", () => {
  const table: Array<[string, string, -1 | 0 | 1]> = [
    ["1.10.0", "1.9.0", 1],
    ["1.2.10", "1.2.9", 1],
    ["1.5.0", "1.19.0", -1],
    ["v1.2", "1.2.0", 0],
    ["V1.2.0", "v1.2", 0],
    ["1", "1.0.0.0", 0],
    ["1.2.3.4", "1.2.3", 1],
    ["1.2.3.0.1", "1.2.3", 1],
    ["1.0.0-beta", "1.0.0", -1],
    ["1.0.0", "1.0.0-rc.1", 1],
    ["1.0.0-pre.8", "1.0.0-pre.12", -1],
    ["1.0.0-pre12", "1.0.0-pre8", -1], // alphanumeric ids compare in ASCII order
    ["1.0.0-alpha", "1.0.0-alpha.1", -1], // shorter set is lower when the prefix is equal
    ["1.0.0-alpha.1", "1.0.0-alpha.beta", -1], // numeric < alphanumeric
    ["1.0.0-alpha.beta", "1.0.0-beta", -1],
    ["1.0.0-beta.2", "1.0.0-beta.11", -1],
    ["1.0.0-rc.1", "1.0.0-rc.1", 0],
    ["1.0.0-Beta", "1.0.0-alpha", -1], // ASCII: uppercase before lowercase
    ["1.0.0+build.2", "1.0.0+build.1", 0], // build metadata ignored
    ["1.0.0-rc.1+b", "1.0.0-rc.1", 0],
    ["2.0", "1.99.99", 1],
    ["1.2-beta", "1.2.0", -1],
    ["1.2-beta", "1.1.9", 1],
    ["99999999999999999999.0", "99999999999999999998.0", 1], // beyond Number precision
    ["9007199254740993", "9007199254740992", 1],
    ["01.2", "1.2", 0], // loose: leading zeros read as numbers
  ];
  for (const [a, b, want] of table) {
    test(`${a} vs ${b} -> ${want}`, () => {
      expect(sign(compareVersions(a, b))).toBe(want);
      expect(sign(compareVersions(b, a))).toBe(-want === 0 ? 0 : -want);
    });
  }

  test("invalid versions sort below every valid one, deterministically among themselves", () => {
    expect(compareVersions("garbage", "0.0.0")).toBe(-1);
    expect(compareVersions("0.0.1", "")).toBe(1);
    expect(compareVersions("abc", "abd")).toBe(-1);
    expect(compareVersions("abc", "abc")).toBe(0);
    const sorted = ["1.10.0", "nope", "1.9.0", "v2", "1.9.0-rc.1"].sort(compareVersions);
    expect(sorted).toEqual(["nope", "1.9.0-rc.1", "1.9.0", "1.10.0", "v2"]);
  });
});

describe("parseVersion / isValidVersion", () => {
  const valid = ["1", "1.2", "1.2.3", "v1.2.3", "V1.2.3.4.5", "1.0.0-beta.1", "1.0.0-x-y.7+sha.abc", "1.0.0+20240101", " 1.2.3 "];
  const invalid = [
    "", "v", "vv1", "1.", ".1", "1..2", "1.2.3-", "1.2.3+", "1.2.3-beta..1", "1.2.x", "latest", "1.2.3 beta",
    "-1.2", "1,2", "1.2.3-bêta", "x".repeat(300), `1.${"0.".repeat(200)}0`,
  ];
  for (const v of valid) test(`valid: ${JSON.stringify(v)}`, () => expect(isValidVersion(v)).toBe(true));
  for (const v of invalid) test(`invalid: ${JSON.stringify(v.slice(0, 40))}`, () => expect(isValidVersion(v)).toBe(false));

  test("parts, pre-release ids and build are split out", () => {
    const p = parseVersion("v1.20.3-rc.4.x+b.5")!;
    expect(p.release).toEqual([1n, 20n, 3n]);
    expect(p.prerelease).toEqual(["rc", 4n, "x"]);
    expect(p.build).toEqual(["b", "5"]);
  });

  test("non-string input is invalid, not a crash", () => {
    expect(parseVersion(undefined as unknown as string)).toBeNull();
  });
});

describe("normalizeVersion / isPrerelease", () => {
  test("strips the leading v only from valid versions", () => {
    expect(normalizeVersion("v1.2.3")).toBe("1.2.3");
    expect(normalizeVersion(" V2.0-beta ")).toBe("2.0-beta");
    expect(normalizeVersion("1.2")).toBe("1.2");
    expect(normalizeVersion("vnext")).toBe("vnext");
    expect(normalizeVersion("")).toBe("");
  });
  test("pre-release detection", () => {
    expect(isPrerelease("1.0.0-beta")).toBe(true);
    expect(isPrerelease("1.0.0+build")).toBe(false);
    expect(isPrerelease("1.0.0")).toBe(false);
    expect(isPrerelease("junk")).toBe(false);
  });
});
