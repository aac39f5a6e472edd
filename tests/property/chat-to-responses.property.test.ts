import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../src/errors";
import { normalizeResponsesRequest } from "../../src/gateway/translate/normalize";
import type { JsonObject } from "../../src/gateway/wire/responses-types";
import { chatToResponses, type ChatToResponsesResult } from "../../src/gateway/translate/chat-to-responses";
import { deepFreeze, jsonObjectOf, junkJson, orJunk, runs, trickyString, withOneDefect } from "./arbitraries";

// ---- chat request bodies: a model of valid requests, with junk in any field ------------------------------

const CALL_IDS = ["call_1", "call_2", "call_3"];
const FN_NAMES = ["get_weather", "search"];

/**
 * Chat bodies. With `hostile` false, only requests a client could mean (most of them translate); with it true,
 * also values the translator must refuse, and junk (any JSON) in any field, so most are refused somewhere.
 */
function chatBody(hostile: boolean): fc.Arbitrary<unknown> {
  /** A plausible value, or (hostile) junk in its place. */
  const J = <T,>(arb: fc.Arbitrary<T>) => (hostile ? orJunk(arb, 1) : arb);
  /** The good values, plus (hostile) values a client may send that must be refused. */
  const G = <T,>(good: readonly T[], bad: readonly T[]) => fc.constantFrom(...good, ...(hostile ? bad : []));
  /** A JSON object of these fields; `need` are always present unless hostile. */
  const O = (fields: Record<string, fc.Arbitrary<unknown>>, need: readonly string[] = []) =>
    jsonObjectOf(fields, [], hostile ? 2 : 0, hostile ? [] : need);
  const oneof = (...alts: Array<[number, fc.Arbitrary<unknown>] | false>) =>
    fc.oneof(...alts.filter((a): a is [number, fc.Arbitrary<unknown>] => a !== false).map(([weight, arbitrary]) => ({ weight, arbitrary })));
  const junk = (fallback: fc.Arbitrary<unknown> = fc.constant(null)) => (hostile ? junkJson() : fallback);

  const text = fc.oneof({ weight: 3, arbitrary: fc.constantFrom("hi", "", "Paris?", "é👋") }, { weight: 1, arbitrary: trickyString });
  const textPart = O({ type: J(fc.constant("text")), text: J(text) }, ["type", "text"]);
  const textContent = fc.oneof(text, fc.constant(null), fc.array(J(textPart), { maxLength: 3 }), junk());

  const url = G(["https://x/y.png", "data:image/png;base64,AAAA"], ["data:,", "", "data:image/png;base64,"]);
  const imagePart = O({
    type: fc.constant("image_url"),
    image_url: J(fc.oneof(url, O({ url: J(url), detail: J(fc.constantFrom("low", "high", "auto")) }, ["url"]))),
  }, ["type", "image_url"]);
  const filePart = O({
    type: fc.constant("file"),
    file: J(O({ file_data: J(fc.constant("data:application/pdf;base64,AA")), file_id: J(fc.constant("file_1")), filename: J(fc.constant("a.pdf")) })),
  });
  const userPart = fc.oneof(
    { weight: 4, arbitrary: textPart },
    { weight: 2, arbitrary: imagePart },
    { weight: 1, arbitrary: hostile ? filePart : O({ type: fc.constant("file"), file: O({ file_id: fc.constant("file_1") }, ["file_id"]) }, ["type", "file"]) },
    { weight: 1, arbitrary: hostile ? O({ type: fc.constantFrom("input_audio", "refusal", "video"), input_audio: junk() }) : textPart },
    { weight: 1, arbitrary: junk(textPart) },
  );
  const userContent = fc.oneof(
    { weight: 3, arbitrary: text },
    { weight: 3, arbitrary: fc.array(userPart, { minLength: hostile ? 0 : 1, maxLength: 3 }) },
    { weight: 1, arbitrary: junk(text) },
  );

  const args = fc.oneof(fc.constantFrom('{"city":"Paris"}', "", "  ", "{", "null"), O({ city: text }), junk());
  const toolCall = J(
    O(
      {
        id: J(G(CALL_IDS, [""])),
        type: J(G(["function"], ["custom"])),
        function: J(O({ name: J(G(FN_NAMES, [""])), arguments: args }, ["name"])),
      },
      ["id", "function"],
    ),
  );
  const refusalPart = O({ type: fc.constant("refusal"), refusal: J(text) }, ["type", "refusal"]);

  const message = oneof(
    [3, O({ role: G(["system", "developer"], []), content: textContent }, ["role"])],
    [5, O({ role: fc.constant("user"), content: userContent, name: text }, ["role", "content"])],
    [
      4,
      O(
        {
          role: fc.constant("assistant"),
          content: fc.oneof(text, fc.constant(null), fc.array(fc.oneof(textPart, refusalPart), { maxLength: 2 }), junk()),
          refusal: J(fc.option(text, { nil: null })),
          tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 3 }), junk()),
          function_call: J(O({ name: J(fc.constantFrom(...FN_NAMES)), arguments: args }, ["name"])),
        },
        ["role"],
      ),
    ],
    [3, O({ role: fc.constant("tool"), tool_call_id: J(G(CALL_IDS, [""])), content: textContent }, ["role", "tool_call_id"])],
    [1, O({ role: fc.constant("function"), name: J(G(FN_NAMES, [""])), content: textContent }, ["role", "name"])],
    hostile && [1, O({ role: J(fc.constantFrom("critic", "constructor", "__proto__", "toString")), content: textContent })],
    hostile && [1, junkJson(["role", "content"])],
  );

  const fnDef = O(
    {
      name: J(G(FN_NAMES, [""])),
      description: J(text),
      parameters: J(fc.constant({ type: "object", properties: { city: { type: "string" } } })),
      strict: J(fc.boolean()),
    },
    ["name"],
  );
  const toolChoice = fc.oneof(
    G(["auto", "none", "required"], ["any"]),
    O({ type: fc.constant("function"), function: J(O({ name: J(fc.constantFrom(...FN_NAMES)) }, ["name"])) }, ["type", "function"]),
    O({
      type: fc.constant("allowed_tools"),
      allowed_tools: J(
        O(
          {
            mode: J(G(["auto", "required"], ["none"])),
            tools: J(
              fc.array(J(O({ type: fc.constant("function"), function: O({ name: J(fc.constantFrom(...FN_NAMES)) }, ["name"]) }, ["type", "function"])), {
                maxLength: 2,
              }),
            ),
          },
          ["mode", "tools"],
        ),
      ),
    }, ["type", "allowed_tools"]),
    junk(fc.constant("auto")),
  );
  const responseFormat = fc.oneof(
    O({ type: G(["text", "json_object"], ["xml"]) }, ["type"]),
    O(
      {
        type: fc.constant("json_schema"),
        json_schema: J(O({ name: J(G(["out"], [""])), schema: J(fc.constant({ type: "object" })), strict: junk(fc.boolean()), description: J(text) }, ["name"])),
      },
      ["type", "json_schema"],
    ),
    junk(fc.constant({ type: "text" })),
  );
  const count = fc.oneof(G([1, 100, 2 ** 31], [2, 0, -1, 1.5]), junk(fc.constant(7)));

  const fields = {
    model: J(G(["gpt-5.4", "m"], [""])),
    // Conversations: a few leading instructions, then turns.
    messages: oneof(
      [
        8,
        fc
          .tuple(fc.array(O({ role: G(["system", "developer"], []), content: textContent }, ["role"]), { maxLength: 3 }), fc.array(message, { minLength: 1, maxLength: 8 }))
          .map(([lead, turns]) => [...lead, ...turns]),
      ],
      hostile && [1, junkJson()],
    ),
    stream: J(fc.boolean()),
    stream_options: J(O({ include_usage: J(fc.boolean()) })),
    n: fc.oneof(G([1], [2, 0, -1, 1.5]), junk(fc.constant(1))),
    modalities: J(G([["text"]], [["text", "audio"], []] as string[][])),
    tools: J(fc.array(J(O({ type: J(G(["function"], ["web_search"])), function: J(fnDef) }, ["type", "function"])), { maxLength: 2 })),
    functions: J(fc.array(J(fnDef), { maxLength: 2 })),
    tool_choice: toolChoice,
    function_call: J(fc.oneof(fc.constantFrom("auto", "none"), O({ name: J(fc.constantFrom(...FN_NAMES)) }, ["name"]))),
    parallel_tool_calls: J(fc.boolean()),
    max_completion_tokens: count,
    max_tokens: count,
    response_format: responseFormat,
    verbosity: J(fc.constantFrom("low", "high")),
    reasoning_effort: J(fc.constantFrom("low", "high", "none")),
    temperature: junk(fc.constant(0.5)),
    metadata: junk(fc.constant({ team: "a" })),
    stop: junk(fc.constant(["\n"])),
    store: junk(fc.boolean()),
  };
  const obj = O(fields, ["model", "messages"]);
  return hostile ? fc.oneof({ weight: 20, arbitrary: obj }, { weight: 1, arbitrary: junkJson(["model", "messages"]) }) : obj;
}

const plausibleBody = chatBody(false);
const hostileBody = chatBody(true);

function translateOrAppError(b: unknown): ChatToResponsesResult | AppError {
  try {
    return chatToResponses(b);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Items the upstream accepts: known types and roles, parts typed for the role, results that answer a call. */
function assertValidInput(input: unknown, fail: (why: string) => never): void {
  if (!Array.isArray(input)) fail("input");
  const calls = new Set<string>();
  for (const it of input as JsonObject[]) {
    if (!isObject(it)) fail("input item");
    if (it.type === "message") {
      if (!["user", "assistant", "developer"].includes(it.role)) fail(`role ${it.role}`);
      if (!Array.isArray(it.content)) fail("content");
      const allowed =
        it.role === "assistant" ? ["output_text", "refusal"] : it.role === "user" ? ["input_text", "input_image", "input_file"] : ["input_text"];
      if (it.role !== "developer" && it.content.length === 0) fail("empty content");
      for (const p of it.content) {
        if (!isObject(p) || !allowed.includes(p.type)) fail(`part ${p?.type} on ${it.role}`);
        if ((p.type === "input_text" || p.type === "output_text") && typeof p.text !== "string") fail("text");
        if (p.type === "refusal" && typeof p.refusal !== "string") fail("refusal");
        if (p.type === "input_image" && (typeof p.image_url !== "string" || p.image_url === "" || typeof p.detail !== "string")) fail("image");
        if (p.type === "input_file" && typeof p.file_data !== "string" && typeof p.file_id !== "string") fail("file");
      }
    } else if (it.type === "function_call") {
      if (typeof it.call_id !== "string" || it.call_id === "" || typeof it.name !== "string" || it.name === "") fail("call");
      if (typeof it.arguments !== "string" || it.arguments.trim() === "") fail("arguments");
      calls.add(it.call_id);
    } else if (it.type === "function_call_output") {
      // A result must answer an earlier call, or the upstream refuses the whole request.
      if (!calls.has(it.call_id)) fail(`orphan result ${it.call_id}`);
      if (typeof it.output !== "string") fail("output");
    } else fail(`item type ${it.type}`);
  }
}

/** What a Responses upstream accepts, as far as this translator is concerned. Throws with a reason. */
function assertValidRequest(body: JsonObject, r: ChatToResponsesResult): void {
  const req = r.request;
  const fail = (why: string): never => {
    throw new Error(`${why}: ${JSON.stringify(req).slice(0, 400)}`);
  };
  if (typeof req.model !== "string" || req.model === "" || req.model !== body.model) fail("model");
  if (req.stream !== true) fail("stream");
  if (r.stream !== (body.stream === true)) fail("stream flag");
  if (r.includeUsage && !r.stream) fail("includeUsage without stream");
  if ("instructions" in req && (typeof req.instructions !== "string" || req.instructions === "")) fail("instructions");
  assertValidInput(req.input, fail);
  for (const t of req.tools ?? []) {
    if (!isObject(t) || t.type !== "function" || typeof t.name !== "string" || t.name === "" || typeof t.strict !== "boolean") fail("tool");
    if ("parameters" in t && !isObject(t.parameters)) fail("parameters");
  }
  if ("max_output_tokens" in req && !(Number.isInteger(req.max_output_tokens) && req.max_output_tokens! >= 1)) fail("max_output_tokens");
  if ("parallel_tool_calls" in req && typeof req.parallel_tool_calls !== "boolean") fail("parallel_tool_calls");
  if ("reasoning" in req && typeof req.reasoning?.effort !== "string") fail("reasoning");
  if ("tool_choice" in req) {
    const c = req.tool_choice;
    if (typeof c === "string" ? !["auto", "none", "required"].includes(c) : !isObject(c)) fail("tool_choice");
  }
  for (const dropped of ["stop", "store", "n", "messages", "stream_options", "functions", "function_call", "response_format"]) {
    if (dropped in req) fail(`chat field ${dropped} forwarded`);
  }
  JSON.stringify(req);
}

describe("chatToResponses: arbitrary bodies", () => {
  /** The property of every body: a valid request or a 400 AppError, nothing else, and the body untouched. */
  function validOrRefused(b: unknown): "valid" | "refused" {
    const before = JSON.stringify(b);
    const r = translateOrAppError(deepFreeze(b));
    expect(JSON.stringify(b)).toBe(before);
    if (r instanceof AppError) {
      expect(r.status).toBe(400);
      expect(r.code).toBe("invalid_request");
      expect(r.param === null || typeof r.param === "string").toBe(true);
      return "refused";
    }
    assertValidRequest(b as JsonObject, r);
    return "valid";
  }

  test("junk anywhere: either a valid Responses request or an AppError (400 invalid_request); never another error, never a mutation", () => {
    fc.assert(fc.property(hostileBody, (b) => void validOrRefused(b)), runs(600));
  });

  test("one defect deep inside a plausible request: either a valid request or an AppError; never another error", () => {
    let valid = 0;
    fc.assert(
      fc.property(withOneDefect(plausibleBody), (b) => {
        if (validOrRefused(b) === "valid") valid++;
      }),
      runs(2500),
    );
    // Both outcomes must be common, or one of the two checks above is hardly exercised.
    expect(valid).toBeGreaterThan(250);
    expect(valid).toBeLessThan(2250);
  });

  test("every plausible request translates, survives normalisation, and still has no system role and no orphan results", () => {
    fc.assert(
      fc.property(plausibleBody, (b) => {
        const r = translateOrAppError(b);
        if (r instanceof AppError) throw new Error(`refused a plausible request: ${r.message}`);
        const out = normalizeResponsesRequest(r.request, { defaultInstructions: "d", modelOverrides: {} });
        // The chat route skips the input's second check and walk: the translation's input is already normalised.
        expect(normalizeResponsesRequest(r.request, { defaultInstructions: "d", modelOverrides: {} }, "chat")).toEqual(out);
        expect(out.stream).toBe(true);
        expect(typeof out.instructions).toBe("string");
        assertValidInput(out.input, (why) => {
          throw new Error(`${why}: ${JSON.stringify(out.input).slice(0, 400)}`);
        });
      }),
      runs(600),
    );
  });

  test("user turns keep their number and order; leading system text that is not blank becomes the instructions", () => {
    fc.assert(
      fc.property(plausibleBody, (b) => {
        const r = translateOrAppError(b);
        if (r instanceof AppError) return;
        const messages = (b as JsonObject).messages as JsonObject[];
        const userTurns = messages.filter((m) => m.role === "user");
        const userItems = (r.request.input as JsonObject[]).filter((it) => it.type === "message" && it.role === "user");
        expect(userItems.length).toBe(userTurns.length);
        userTurns.forEach((m, i) => {
          if (typeof m.content === "string") expect(userItems[i].content).toEqual([{ type: "input_text", text: m.content }]);
        });
        const leading: string[] = [];
        for (const m of messages) {
          if (m.role !== "system" && m.role !== "developer") break;
          const t = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.map((p: JsonObject) => p.text).join("\n") : "";
          if (t.trim() !== "") leading.push(t); // blank ones are left out
        }
        expect(r.request.instructions).toBe(leading.length > 0 ? leading.join("\n\n") : undefined);
      }),
      runs(600),
    );
  });
});
