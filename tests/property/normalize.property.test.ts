import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../src/errors";
import { normalizeResponsesRequest, type NormalizeOptions } from "../../src/gateway/translate/normalize";
import type { JsonObject, ResponsesRequest } from "../../src/gateway/wire/responses-types";
import { deepFreeze, jsonObjectOf, junkJson, orJunk, runs, trickyString } from "./arbitraries";

const ENCRYPTED = "reasoning.encrypted_content";
const KNOWN_ROLES = new Set(["user", "assistant", "developer", "system"]);

// ---- request bodies: mostly the shapes clients send, with junk anywhere ---------------------------------

const role = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("user", "assistant", "system", "developer") },
  { weight: 2, arbitrary: fc.constantFrom("tool", "constructor", "toString", "__proto__", "hasOwnProperty", "") },
  { weight: 1, arbitrary: junkJson() },
);
const partType = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("text", "input_text", "output_text", "input_image", "input_file", "refusal") },
  { weight: 1, arbitrary: junkJson() },
);
const part = orJunk(jsonObjectOf({ type: partType, text: orJunk(trickyString), image_url: fc.constant("data:image/png;base64,AA") }));
const content = fc.oneof(trickyString, fc.constant(null), fc.array(part, { maxLength: 4 }), junkJson());

const callName = fc.oneof(fc.constantFrom("get_weather", "search", "", "__proto__", "constructor"), junkJson());
const argsObject = fc.oneof(
  fc.constant({ city: "Paris" }),
  fc.constant({ q: 1, deep: { a: [1, "x", null] } }),
  junkJson(["city", "q"]),
);
const callArguments = fc.oneof(argsObject.map((a) => JSON.stringify(a)), argsObject, fc.constantFrom("", "{", "not json", "[]", "null"));

const item = fc.oneof(
  { weight: 6, arbitrary: jsonObjectOf({ type: fc.constant("message"), role, content }) },
  { weight: 3, arbitrary: jsonObjectOf({ role, content }) },
  {
    weight: 3,
    arbitrary: jsonObjectOf({ type: fc.constant("function_call"), name: callName, call_id: trickyString, arguments: callArguments }),
  },
  {
    weight: 2,
    arbitrary: jsonObjectOf({
      type: fc.constant("function_call_output"),
      call_id: trickyString,
      output: fc.oneof(trickyString, fc.array(part, { maxLength: 3 }), junkJson()),
    }),
  },
  { weight: 1, arbitrary: junkJson(["type", "role", "content"]) },
);

const toolDef = orJunk(
  fc.oneof(
    jsonObjectOf({ type: fc.constant("function"), name: callName, parameters: junkJson() }),
    jsonObjectOf({ type: fc.constant("function"), function: jsonObjectOf({ name: callName }) }),
  ),
);

const body = jsonObjectOf(
  {
    model: orJunk(fc.constantFrom("m", "gpt-5.4", "__proto__", "toString", "constructor")),
    input: fc.oneof({ weight: 1, arbitrary: trickyString }, { weight: 4, arbitrary: fc.array(item, { maxLength: 6 }) }, { weight: 1, arbitrary: junkJson() }),
    instructions: fc.oneof({ weight: 4, arbitrary: trickyString }, { weight: 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: junkJson() }),
    include: fc.oneof(fc.array(fc.constantFrom(ENCRYPTED, "file_search_call.results", "x"), { maxLength: 3 }), junkJson()),
    tools: fc.oneof(fc.array(toolDef, { maxLength: 3 }), junkJson()),
    reasoning: orJunk(jsonObjectOf({ effort: fc.constantFrom("low", "high"), summary: fc.constant("auto") })),
    stream: junkJson(),
    store: junkJson(),
  },
  ["input", "tools", "instructions"],
);

const options: fc.Arbitrary<NormalizeOptions> = fc.record(
  {
    defaultInstructions: trickyString,
    modelOverrides: fc.constantFrom<NormalizeOptions["modelOverrides"]>({}, { "gpt-5.4": { reasoningEffort: "xhigh" } }, { m: {} }),
    stripFields: fc.subarray(["temperature", "top_p", "user", "metadata", "tool_choice"]),
  },
  { requiredKeys: ["defaultInstructions", "modelOverrides"] },
);

/** Normalises, or returns the AppError it threw; any other throw fails the property. */
function normalizeOrAppError(b: unknown, o: NormalizeOptions): ResponsesRequest | AppError {
  try {
    return normalizeResponsesRequest(b as ResponsesRequest, o);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isMessage(it: unknown): it is JsonObject {
  return isObject(it) && (it.type === "message" || (it.type === undefined && typeof it.role === "string"));
}

/** The same minimal JSON Schema check as the unit test, for the schemas the normaliser writes. */
function accepts(schema: JsonObject, value: unknown): boolean {
  const t = value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "object" ? "object" : typeof value;
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [t] : [schema.type];
  if (!types.includes(t)) return false;
  if (t === "object") {
    for (const [k, v] of Object.entries(value as JsonObject)) {
      const sub = Object.hasOwn(schema.properties ?? {}, k) ? schema.properties[k] : undefined;
      if (sub && !accepts(sub, v)) return false;
      if (!sub && schema.additionalProperties === false) return false;
    }
  }
  if (t === "array" && schema.items) return (value as unknown[]).every((v) => accepts(schema.items, v));
  return true;
}

function parsedArgs(args: unknown): JsonObject | undefined {
  if (isObject(args)) return args;
  if (typeof args !== "string") return undefined;
  try {
    const v = JSON.parse(args);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

describe("normalizeResponsesRequest: arbitrary bodies", () => {
  test("never throws anything but an AppError, and never mutates its input", () => {
    fc.assert(
      fc.property(body, options, (b, o) => {
        const before = JSON.stringify(b);
        // Frozen: an attempt to write into the input throws a TypeError, which fails the property.
        normalizeOrAppError(deepFreeze(b), o);
        expect(JSON.stringify(b)).toBe(before);
      }),
      runs(600),
    );
  });

  test("the output streams, has string instructions, asks for encrypted reasoning, and has no system role", () => {
    fc.assert(
      fc.property(body, options, (b, o) => {
        const out = normalizeOrAppError(b, o);
        if (out instanceof AppError) return;
        expect(out.stream).toBe(true);
        expect(typeof out.instructions).toBe("string");
        expect(Array.isArray(out.include)).toBe(true);
        expect(out.include).toContain(ENCRYPTED);
        expect(new Set(out.include).size).toBe(out.include!.length);
        if (typeof b.input === "string" || Array.isArray(b.input)) expect(Array.isArray(out.input)).toBe(true);
        for (const it of Array.isArray(out.input) ? out.input : []) {
          if (isMessage(it)) expect(it.role).not.toBe("system");
        }
      }),
      runs(600),
    );
  });

  test("text parts are typed for their role: output_text for assistant, input_text for user and developer", () => {
    fc.assert(
      fc.property(body, options, (b, o) => {
        const out = normalizeOrAppError(b, o);
        if (out instanceof AppError || !Array.isArray(out.input)) return;
        for (const it of out.input) {
          if (!isMessage(it) || !KNOWN_ROLES.has(it.role)) continue;
          // Known roles always end with a parts array when content was a string or an array.
          if (typeof it.content === "string") throw new Error(`string content left on a ${it.role} message`);
          if (!Array.isArray(it.content)) continue;
          const want = it.role === "assistant" ? "output_text" : "input_text";
          for (const p of it.content) {
            if (isObject(p) && (p.type === "text" || p.type === "input_text" || p.type === "output_text")) expect(p.type).toBe(want);
          }
        }
      }),
      runs(600),
    );
  });

  test("a message of any other role is refused with a 400 naming the input", () => {
    fc.assert(
      fc.property(body, options, (b, o) => {
        if (!Array.isArray(b.input) || !b.input.some((it: unknown) => isMessage(it) && !KNOWN_ROLES.has(it.role))) return;
        const out = normalizeOrAppError(b, o);
        expect(out).toBeInstanceOf(AppError);
        expect((out as AppError).status).toBe(400);
        expect((out as AppError).param).toStartWith("input");
      }),
      runs(600),
    );
  });

  test("every function named in the history is defined, with a schema accepting every arguments object it was called with", () => {
    fc.assert(
      fc.property(body, options, (b, o) => {
        const out = normalizeOrAppError(b, o);
        if (out instanceof AppError || !Array.isArray(out.input)) return;
        if (o.stripFields?.includes("tools")) return;
        const tools = Array.isArray(out.tools) ? out.tools : [];
        const named = (t: unknown) =>
          isObject(t) ? (typeof t.name === "string" ? t.name : isObject(t.function) && typeof t.function.name === "string" ? t.function.name : undefined) : undefined;
        for (const it of out.input) {
          if (!isObject(it) || it.type !== "function_call" || typeof it.name !== "string" || it.name === "") continue;
          const defs = tools.filter((t) => named(t) === it.name);
          expect(defs.length).toBeGreaterThan(0);
          // A definition the caller gave is theirs to get right; a rebuilt one must accept what was sent.
          const rebuilt = defs.find((t) => isObject(t) && typeof t.description === "string" && t.description.startsWith("The function"));
          const args = parsedArgs(it.arguments);
          if (rebuilt && args) expect(accepts(rebuilt.parameters, args)).toBe(true);
        }
      }),
      runs(600),
    );
  });

  test("normalising twice gives the same request as normalising once", () => {
    fc.assert(
      fc.property(body, options, (b, o) => {
        const once = normalizeOrAppError(b, o);
        if (once instanceof AppError) return;
        const twice = normalizeOrAppError(JSON.parse(JSON.stringify(once)), o);
        expect(twice).toEqual(JSON.parse(JSON.stringify(once)));
      }),
      runs(400),
    );
  });
});
