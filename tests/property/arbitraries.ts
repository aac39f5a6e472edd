/**
 * Shared generators and run settings of the property tests.
 *
 * Runs are seeded so a failure reproduces: fast-check prints the seed and the counterexample path. Set
 * PROPERTY_SEED to explore other seeds, and PROPERTY_RUNS_SCALE (e.g. 10) for a longer local run; the defaults
 * keep the whole tests/property/ run at a few seconds.
 */
import fc from "fast-check";

const SEED = Number(process.env.PROPERTY_SEED ?? 20250915);
const SCALE = Number(process.env.PROPERTY_RUNS_SCALE ?? 1);

export function runs(numRuns: number): fc.Parameters<unknown> {
  return { seed: SEED, numRuns: Math.max(1, Math.round(numRuns * SCALE)) };
}

/** Keys that break naive code: prototype members, and ones JSON.parse makes own properties of. */
export const TRICKY_KEYS = ["__proto__", "constructor", "toString", "valueOf", "hasOwnProperty", "prototype"] as const;

/** Strings a hostile client or upstream likes to send. */
export const trickyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\uFEFF",
    "\uD800",
    "é",
    "👋",
    "<",
    "</tool_use>",
    "[DONE]",
    "null",
    "{}",
    "NaN",
    "-1",
    "1e309",
    "9".repeat(30),
    ...TRICKY_KEYS,
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 8 }),
);

/** An object with own enumerable properties, as JSON.parse builds it (so `__proto__` is an ordinary key). */
export function ownObject(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/**
 * JSON objects that cannot be turned into a string: JSON.parse makes `toString` an own, non-callable property,
 * so String(v), `${v}`, v + "" and [v].join() throw a TypeError.
 */
export const unprintable: fc.Arbitrary<unknown> = fc.constantFrom(
  JSON.parse('{"toString":0}'),
  JSON.parse('{"toString":{},"valueOf":{}}'),
  JSON.parse('[{"toString":0}]'),
);

/** Arbitrary JSON values (what JSON.parse can return), biased towards keys and strings that break code. */
export function junkJson(keys: readonly string[] = [], maxDepth = 3): fc.Arbitrary<unknown> {
  const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...keys, ...TRICKY_KEYS, "type", "text", "name") }, { weight: 1, arbitrary: trickyString });
  const scalar = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -3, max: 3 }),
    fc.constantFrom(-0, 0.5, 1e21, -1e21, Number.MAX_SAFE_INTEGER + 2, 2 ** 53, -(2 ** 31)),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    trickyString,
  );
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", maxDepth, withCrossShrink: true },
      scalar,
      unprintable,
      fc.array(tie("value"), { maxLength: 4 }),
      fc.array(fc.tuple(key, tie("value")), { maxLength: 4 }).map(ownObject),
    ),
  }));
  return value;
}

/** A JSON object with the given keys present or absent, each either a plausible value or junk. */
export function jsonObjectOf(
  fields: Record<string, fc.Arbitrary<unknown>>,
  junkKeys: readonly string[] = [],
  maxExtraKeys = 2,
  requiredKeys: readonly string[] = [],
): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(fields);
  return fc
    .tuple(
      fc.tuple(...names.map((n) => (requiredKeys.includes(n) ? fields[n] : fc.option(fields[n], { nil: undefined, freq: 3 })))),
      fc.array(fc.tuple(fc.constantFrom(...TRICKY_KEYS, ...junkKeys, "x"), junkJson(junkKeys, 1)), { maxLength: maxExtraKeys }),
    )
    .map(([values, extra]) => {
      const entries: Array<[string, unknown]> = [];
      names.forEach((n, i) => {
        if (values[i] !== undefined) entries.push([n, values[i]]);
      });
      return ownObject([...entries, ...extra]);
    });
}

/** Either the plausible value (mostly) or arbitrary junk in its place. */
export function orJunk<T>(arb: fc.Arbitrary<T>, junkWeight = 1, keys: readonly string[] = []): fc.Arbitrary<unknown> {
  if (junkWeight <= 0) return arb;
  return fc.oneof({ weight: 6, arbitrary: arb }, { weight: junkWeight, arbitrary: junkJson(keys, 2) });
}

/** Deep freeze, so that any attempt to mutate the input throws in strict-mode module code. */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Reflect.ownKeys(v as object)) deepFreeze((v as Record<PropertyKey, unknown>)[k]);
  }
  return v;
}

/** Splits `length` items at the given cut points (any numbers; reduced modulo length+1, sorted, duplicates kept = empty chunks). */
export function cutPoints(length: number, raw: number[]): number[] {
  return raw.map((n) => n % (length + 1)).sort((a, b) => a - b);
}

export function splitAt<T extends { slice(a: number, b?: number): T; length: number }>(whole: T, cuts: number[]): T[] {
  const out: T[] = [];
  let prev = 0;
  for (const c of cuts) {
    out.push(whole.slice(prev, c));
    prev = c;
  }
  out.push(whole.slice(prev));
  return out;
}

/** Every path into a JSON value (arrays by index, objects by own key), the root included as []. */
function pathsOf(v: unknown, prefix: PropertyKey[] = [], out: PropertyKey[][] = []): PropertyKey[][] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...prefix, i], out));
  else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) pathsOf((v as Record<string, unknown>)[k], [...prefix, k], out);
  return out;
}

/** A copy of `v` with the value at `path` replaced (or, for `remove`, the key deleted / element dropped). */
function replaceAt(v: unknown, path: PropertyKey[], junk: unknown, remove: boolean): unknown {
  if (path.length === 0) return junk;
  const [head, ...rest] = path;
  if (Array.isArray(v)) {
    const copy = [...v];
    if (rest.length === 0 && remove) copy.splice(head as number, 1);
    else copy[head as number] = replaceAt(v[head as number], rest, junk, remove);
    return copy;
  }
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([k]) => !(rest.length === 0 && remove && k === head))
    .map(([k, x]) => [k, k === head ? replaceAt(x, rest, junk, remove) : x] as const);
  return ownObject(entries);
}

/** What replaces a value in `withOneDefect`: mostly the values that crash code reading a property of them. */
const defectValue = fc.oneof(
  { weight: 4, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.constantFrom<unknown>({}, [], "", 0, true, "x", [null]) },
  { weight: 3, arbitrary: junkJson() },
);

/**
 * A plausible value with exactly one defect somewhere deep inside: one value replaced by junk, or one key or
 * element removed. This reaches the checks far down a structure, which junk everywhere rarely does (some
 * shallow check refuses it first).
 */
export function withOneDefect(arb: fc.Arbitrary<unknown>, junk: fc.Arbitrary<unknown> = defectValue): fc.Arbitrary<unknown> {
  return fc.tuple(arb, fc.nat(), junk, fc.boolean()).map(([v, n, j, remove]) => {
    const paths = pathsOf(v);
    const path = paths[n % paths.length];
    return replaceAt(v, path, j, remove && path.length > 0);
  });
}
