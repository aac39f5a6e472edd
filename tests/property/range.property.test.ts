import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseRange, type ByteRange } from "../../src/site/downloads/rules/range";
import { runs, trickyString } from "./arbitraries";

/** Representation sizes: empty, tiny, ordinary, and past Number's exact integers. */
const size = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(0, 1, 2) },
  { weight: 6, arbitrary: fc.nat(60) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 32, Number.MAX_SAFE_INTEGER) },
);
const offset = fc.oneof(
  { weight: 6, arbitrary: fc.nat(70).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("0000", "9007199254740992", "9007199254740993", "99999999999999999999", "9".repeat(400)) },
);
/** One range-spec: first-last, first-, -suffix (as RFC 9110 writes them), with optional spaces around it. */
const spec = fc.oneof(
  fc.tuple(offset, offset).map(([a, b]) => `${a}-${b}`),
  offset.map((a) => `${a}-`),
  offset.map((b) => `-${b}`),
);
const pad = fc.constantFrom("", " ", "\t", "  ");
/** Headers that are syntactically valid, in any unit spelling RFC 9110 allows. */
const validHeader = fc
  .tuple(fc.constantFrom("bytes", "Bytes", "BYTES", " bytes "), fc.array(fc.tuple(pad, spec, pad), { minLength: 1, maxLength: 6 }), fc.boolean())
  .map(([unit, specs, emptyElement]) => `${unit}=${specs.map(([a, s, b]) => a + s + b).join(",")}${emptyElement ? ", ," : ""}`);
/** Anything a client can put in the header. */
const anyHeader = fc.oneof(
  validHeader,
  fc.constantFrom(null, undefined, "", "bytes=", "bytes=-", "bytes=1-0", "bytes=a-b", "bytes=1-2-3", "items=0-1", "bytes 0-1", "bytes=0x1-2", "bytes=1e3-", "bytes=+1-2", "bytes=٣-٤", "=0-1"),
  fc.string({ maxLength: 30 }).map((s) => `bytes=${s}`),
  trickyString,
  fc.string({ unit: "binary", maxLength: 40 }),
);

/** Which spec entries are satisfiable on their own, read independently of the implementation. */
function satisfiable(header: string, n: number): Array<{ start: bigint; end: bigint }> {
  const out: Array<{ start: bigint; end: bigint }> = [];
  const N = BigInt(n);
  for (const s of header.slice(header.indexOf("=") + 1).split(",").map((x) => x.trim()).filter(Boolean)) {
    const [a, b] = s.split("-");
    if (a === "") {
      const suffix = BigInt(b);
      if (suffix > 0n && N > 0n) out.push({ start: suffix >= N ? 0n : N - suffix, end: N - 1n });
    } else if (BigInt(a) < N) {
      const last = b === "" ? N - 1n : BigInt(b);
      out.push({ start: BigInt(a), end: last < N - 1n ? last : N - 1n });
    }
  }
  return out;
}

function bytesOf(ranges: Array<{ start: bigint | number; end: bigint | number }>): Set<number> {
  const set = new Set<number>();
  for (const r of ranges) for (let i = Number(r.start); i <= Number(r.end); i++) set.add(i);
  return set;
}

describe("Range parsing", () => {
  test("arbitrary headers and sizes never throw; every range returned lies inside the representation", () => {
    fc.assert(
      fc.property(anyHeader, size, fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }), (header, n, maxRanges) => {
        const r = parseRange(header as string | null | undefined, n, maxRanges === undefined ? {} : { maxRanges });
        expect(["none", "ranges", "unsatisfiable"]).toContain(r.kind);
        if (r.kind !== "ranges") return;
        expect(r.ranges.length).toBeGreaterThan(0);
        if (maxRanges !== undefined) expect(r.ranges.length).toBeLessThanOrEqual(maxRanges);
        for (const { start, end } of r.ranges) {
          expect(Number.isSafeInteger(start) && Number.isSafeInteger(end)).toBe(true);
          expect(0 <= start && start <= end && end < n).toBe(true);
        }
      }),
      runs(1500),
    );
  });

  test("a valid header is unsatisfiable exactly when none of its ranges can be served; too many ranges are ignored", () => {
    fc.assert(
      fc.property(validHeader, size, fc.integer({ min: 1, max: 8 }), (header, n, maxRanges) => {
        const count = header.slice(header.indexOf("=") + 1).split(",").filter((s) => s.trim() !== "").length;
        // More range-specs than allowed: the header is ignored (a full 200), whatever they ask for.
        if (count > maxRanges) expect(parseRange(header, n, { maxRanges })).toEqual({ kind: "none" });
        const r = parseRange(header, n);
        const hasInvertedSpec = header
          .slice(header.indexOf("=") + 1)
          .split(",")
          .map((s) => s.trim())
          .some((s) => /^\d+-\d+$/.test(s) && BigInt(s.split("-")[1]) < BigInt(s.split("-")[0]));
        // `last < first` makes the whole header invalid, and an invalid Range is ignored (never a 416).
        if (hasInvertedSpec) return expect(r.kind).toBe("none");
        const ok = satisfiable(header, n);
        if (ok.length > 0) expect(r.kind).toBe("ranges");
        else {
          // A suffix range on an empty representation selects nothing yet is satisfiable: a plain 200.
          const emptyOk = n === 0 && /(^|[=,])\s*-0*[1-9]/.test(header);
          expect(r.kind).toBe(emptyOk ? "none" : "unsatisfiable");
        }
      }),
      runs(1000),
    );
  });

  test("the ranges served are exactly the bytes asked for, in the order asked unless two overlap", () => {
    fc.assert(
      fc.property(validHeader, fc.nat(60), (header, n) => {
        const r = parseRange(header, n);
        if (r.kind !== "ranges") return;
        const wanted = satisfiable(header, n);
        expect(bytesOf(r.ranges)).toEqual(bytesOf(wanted));
        const asNumbers = wanted.map((w): ByteRange => ({ start: Number(w.start), end: Number(w.end) }));
        const sorted = [...asNumbers].sort((a, b) => a.start - b.start);
        const overlap = sorted.some((w, i) => i > 0 && w.start <= sorted[i - 1].end);
        if (!overlap) expect(r.ranges).toEqual(asNumbers);
        else {
          // Merged: sorted, disjoint and not touching.
          r.ranges.forEach((x, i) => i > 0 && expect(x.start).toBeGreaterThan(r.ranges[i - 1].end + 1));
        }
      }),
      runs(1000),
    );
  });
});
