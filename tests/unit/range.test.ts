import { describe, expect, test } from "bun:test";
import { contentRange, parseRange, unsatisfiedContentRange, type RangeResult } from "../../src/site/downloads/rules/range";

const r = (...pairs: Array<[number, number]>): RangeResult => ({
  kind: "ranges",
  ranges: pairs.map(([start, end]) => ({ start, end })),
});
const NONE: RangeResult = { kind: "none" };
const UNSAT: RangeResult = { kind: "unsatisfiable" };

describe("parseRange", () => {
  const SIZE = 1000;
  const table: Array<[string | null, RangeResult]> = [
    [null, NONE],
    ["", NONE],
    // single ranges
    ["bytes=0-499", r([0, 499])],
    ["bytes=0-0", r([0, 0])],
    ["bytes=500-", r([500, 999])],
    ["bytes=999-", r([999, 999])],
    ["bytes=500-5000", r([500, 999])], // end clamped
    ["bytes=-200", r([800, 999])],
    ["bytes=-5000", r([0, 999])], // suffix longer than the file
    ["Bytes=1-2", r([1, 2])], // unit is case-insensitive
    // multiple ranges, order kept when nothing overlaps
    ["bytes=0-9,20-29", r([0, 9], [20, 29])],
    ["bytes=0-9, 20-29 ,  -10", r([0, 9], [20, 29], [990, 999])],
    ["bytes=500-599,0-99", r([500, 599], [0, 99])],
    ["bytes=0-9,,20-29,", r([0, 9], [20, 29])], // empty list elements
    // overlapping ranges are coalesced (sorted)
    ["bytes=0-,0-,0-", r([0, 999])],
    ["bytes=50-99,0-60,200-299", r([0, 99], [200, 299])],
    ["bytes=0-9,10-19,30-39,5-6", r([0, 19], [30, 39])], // touching ranges join when coalescing
    ["bytes=-100,850-", r([850, 999])],
    // unsatisfiable parts dropped; all unsatisfiable -> 416
    ["bytes=1000-", UNSAT],
    ["bytes=1000-2000", UNSAT],
    ["bytes=-0", UNSAT],
    ["bytes=1000-1001,0-0", r([0, 0])],
    ["bytes=2000-,3000-3100", UNSAT],
    // invalid syntax: header ignored
    ["bytes=5-1", NONE],
    ["bytes=0-1,5-1", NONE],
    ["bytes=", NONE],
    ["bytes=-", NONE],
    ["bytes=,", NONE],
    ["bytes=a-b", NONE],
    ["bytes=1-2-3", NONE],
    ["bytes=--1", NONE],
    ["bytes=+1-2", NONE],
    ["bytes=1.5-2", NONE],
    ["bytes 0-1", NONE],
    ["items=0-1", NONE],
    ["0-1", NONE],
    ["bytes=0x10-20", NONE],
  ];
  for (const [header, want] of table) {
    test(`${JSON.stringify(header)} of ${SIZE}`, () => expect(parseRange(header, SIZE)).toEqual(want));
  }

  test("numbers beyond Number.MAX_SAFE_INTEGER do not crash", () => {
    const huge = "9".repeat(30);
    const enormous = "9".repeat(400); // Number() gives Infinity
    expect(parseRange(`bytes=${huge}-`, SIZE)).toEqual(UNSAT);
    expect(parseRange(`bytes=0-${huge}`, SIZE)).toEqual(r([0, 999]));
    expect(parseRange(`bytes=0-${enormous}`, SIZE)).toEqual(r([0, 999]));
    expect(parseRange(`bytes=-${enormous}`, SIZE)).toEqual(r([0, 999]));
    expect(parseRange(`bytes=${enormous}-${enormous}`, SIZE)).toEqual(UNSAT);
    expect(parseRange(`bytes=${huge}-1`, SIZE)).toEqual(NONE); // last < first
  });

  test("last < first is told apart exactly past 2^53 (property-test regression)", () => {
    // Found by tests/property/range: both offsets round to the Number 9007199254740992, so the inverted spec
    // looked valid and the header got a 416 instead of being ignored.
    expect(parseRange("bytes=9007199254740993-9007199254740992", SIZE)).toEqual(NONE);
    expect(parseRange(`bytes=1${"0".repeat(400)}-9${"9".repeat(398)}`, SIZE)).toEqual(NONE);
    expect(parseRange("bytes=9007199254740992-9007199254740993", SIZE)).toEqual(UNSAT);
    expect(parseRange("bytes=0010-9", SIZE)).toEqual(NONE);
    expect(parseRange("bytes=0009-10", SIZE)).toEqual(r([9, 10]));
  });

  test("large files keep exact offsets", () => {
    const size = 5 * 1024 ** 3; // 5 GiB
    expect(parseRange("bytes=4294967296-", size)).toEqual(r([4294967296, size - 1]));
  });

  test("zero-length representation", () => {
    expect(parseRange("bytes=0-", 0)).toEqual(UNSAT);
    expect(parseRange("bytes=0-0", 0)).toEqual(UNSAT);
    expect(parseRange("bytes=-0", 0)).toEqual(UNSAT);
    expect(parseRange("bytes=-10", 0)).toEqual(NONE); // satisfiable but selects nothing: plain 200
  });

  test("range count limit: default lets electron-updater's 1000 through, more are ignored", () => {
    const specs = (n: number) => Array.from({ length: n }, (_, i) => `${i * 10}-${i * 10 + 4}`).join(",");
    const big = 100_000;
    const ok = parseRange(`bytes=${specs(1000)}`, big);
    expect(ok.kind).toBe("ranges");
    expect(ok.kind === "ranges" && ok.ranges.length).toBe(1000);
    expect(parseRange(`bytes=${specs(1001)}`, big)).toEqual(NONE);
    expect(parseRange(`bytes=${specs(3)}`, big, { maxRanges: 2 })).toEqual(NONE);
    expect(parseRange(`bytes=${specs(2)}`, big, { maxRanges: 2 }).kind).toBe("ranges");
  });
});

describe("Content-Range", () => {
  test("206 and 416 forms", () => {
    expect(contentRange(0, 499, 1000)).toBe("bytes 0-499/1000");
    expect(unsatisfiedContentRange(1000)).toBe("bytes */1000");
  });
});
