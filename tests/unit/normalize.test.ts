import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { normalizeResponsesRequest, type NormalizeOptions } from "../../src/gateway/translate/normalize";
import type { JsonObject, ResponsesRequest } from "../../src/gateway/wire/responses-types";

const OPTIONS: NormalizeOptions = {
  defaultInstructions: "You are a helpful assistant.",
  modelOverrides: { "gpt-5.4": { reasoningEffort: "xhigh" } },
};

const norm = (body: ResponsesRequest, options: Partial<NormalizeOptions> = {}) =>
  normalizeResponsesRequest(body, { ...OPTIONS, ...options });

const inputOf = (r: ResponsesRequest) => r.input as JsonObject[];

/** A minimal JSON Schema check, enough for the schemas the normaliser writes (type unions, properties, items). */
function accepts(schema: JsonObject, value: unknown): boolean {
  const t =
    value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "object" ? "object" : typeof value;
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [t] : [schema.type];
  if (!types.includes(t)) return false;
  if (t === "object") {
    const obj = value as JsonObject;
    if (Array.isArray(schema.required) && schema.required.some((k: string) => !(k in obj))) return false;
    for (const [k, v] of Object.entries(obj)) {
      const sub = schema.properties?.[k];
      if (sub) {
        if (!accepts(sub, v)) return false;
      } else if (schema.additionalProperties === false) return false;
    }
  }
  if (t === "array" && schema.items) return (value as unknown[]).every((v) => accepts(schema.items, v));
  return true;
}

describe("input", () => {
  test("a plain string becomes one user message with an input_text part", () => {
    expect(inputOf(norm({ model: "m", input: "Hello there" }))).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "Hello there" }] },
    ]);
  });

  test("role system becomes developer, with or without type: message", () => {
    const out = inputOf(
      norm({ model: "m", input: [{ type: "message", role: "system", content: "a" }, { role: "system", content: "b" }] }),
    );
    expect(out.map((m) => m.role)).toEqual(["developer", "developer"]);
    expect(out.map((m) => m.type)).toEqual(["message", undefined]);
  });

  test("string content becomes one text part typed for the role", () => {
    const out = inputOf(
      norm({
        model: "m",
        input: [
          { role: "user", content: "u" },
          { role: "assistant", content: "a" },
          { role: "developer", content: "d" },
          { role: "system", content: "s" },
        ],
      }),
    );
    expect(out.map((m) => m.content)).toEqual([
      [{ type: "input_text", text: "u" }],
      [{ type: "output_text", text: "a" }],
      [{ type: "input_text", text: "d" }],
      [{ type: "input_text", text: "s" }],
    ]);
  });

  test("text, input_text and output_text parts are retyped for the role; other parts are kept", () => {
    const image = { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" };
    const file = { type: "input_file", file_id: "file_1" };
    const refusal = { type: "refusal", refusal: "no" };
    const out = inputOf(
      norm({
        model: "m",
        input: [
          {
            role: "user",
            content: [{ type: "text", text: "1" }, { type: "output_text", text: "2" }, image, file, { type: "input_text", text: "3" }],
          },
          {
            type: "message",
            role: "assistant",
            content: [{ type: "input_text", text: "4", annotations: [] }, refusal, { type: "text", text: "5" }],
          },
        ],
      }),
    );
    expect(out[0].content).toEqual([
      { type: "input_text", text: "1" },
      { type: "input_text", text: "2" },
      image,
      file,
      { type: "input_text", text: "3" },
    ]);
    expect(out[1].content).toEqual([{ type: "output_text", text: "4", annotations: [] }, refusal, { type: "output_text", text: "5" }]);
  });

  test("a message with an unknown role is refused, naming the item's role", () => {
    const item = { role: "tool", content: [{ type: "text", text: "x" }] };
    expect(() => norm({ model: "m", input: [item] })).toThrow(AppError);
    try {
      norm({ model: "m", input: [{ type: "message", role: "user", content: "ok" }, item] });
    } catch (err) {
      expect(err).toMatchObject({ status: 400, code: "invalid_request", param: "input[1].role" });
    }
  });

  test("a role named like an Object.prototype member is an unknown role, refused (property-test regression)", () => {
    // Found by tests/property/normalize: TEXT_TYPE_OF_ROLE["hasOwnProperty"] used to be a function, and the
    // content was rewritten into parts whose `type` was that function (dropped by JSON.stringify).
    for (const role of ["hasOwnProperty", "constructor", "toString", "__proto__"]) {
      const item = JSON.parse(`{"role":${JSON.stringify(role)},"content":"x"}`);
      expect(() => norm({ model: "m", input: [item] })).toThrow("input[0].role");
    }
  });

  test("malformed input is refused with a 400 naming where, before anything goes upstream", () => {
    const cases: Array<[unknown, string]> = [
      [5, "input"],
      [{ role: "user", content: "x" }, "input"],
      [true, "input"],
      [[null], "input[0]"],
      [[1, 2, 3], "input[0]"],
      [["hello"], "input[0]"],
      [[[]], "input[0]"],
      [[{ type: "message", role: "user", content: "ok" }, null], "input[1]"],
      [[{ content: "no type, no role" }], "input[0].type"],
      [[{ type: 5 }], "input[0].type"],
      [[{ type: "" }], "input[0].type"],
      [[{ type: null, role: "user", content: "x" }], "input[0].type"],
      [[{ type: "message", role: 5, content: "x" }], "input[0].role"],
      [[{ type: "message", content: "x" }], "input[0].role"],
      [[{ type: "message", role: "wizard", content: "x" }], "input[0].role"],
      [[{ type: "message", role: "user", content: 5 }], "input[0].content"],
      [[{ type: "message", role: "user", content: { type: "input_text", text: "x" } }], "input[0].content"],
      [[{ role: "user", content: [null] }], "input[0].content[0]"],
      [[{ role: "user", content: ["x"] }], "input[0].content[0]"],
      [[{ role: "user", content: [{ text: "x" }] }], "input[0].content[0].type"],
      [[{ role: "user", content: [{ type: "input_text", text: 5 }] }], "input[0].content[0].text"],
      [[{ role: "assistant", content: [{ type: "output_text" }] }], "input[0].content[0].text"],
    ];
    for (const [input, param] of cases) {
      let thrown: unknown = null;
      try {
        norm({ model: "m", input } as ResponsesRequest);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, JSON.stringify(input)).toBeInstanceOf(AppError);
      expect(thrown).toMatchObject({ status: 400, code: "invalid_request", param });
    }
  });

  test("well-formed items of every kind still pass: other item types, a null message content, image and file parts", () => {
    const input = [
      { type: "message", role: "system", content: "be brief" },
      { role: "user", content: [{ type: "input_text", text: "hi" }, { type: "input_image", image_url: "data:image/png;base64,AA" }, { type: "input_file", file_id: "f" }] },
      { role: "assistant", content: null },
      { type: "reasoning", summary: [], encrypted_content: "x" },
      { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c", output: "ok" },
      { type: "item_reference", id: "msg_1" },
      { type: "some_future_item", whatever: [1, null] },
    ];
    expect(() => norm({ model: "m", input })).not.toThrow();
    expect(() => norm({ model: "m", input: "text" })).not.toThrow();
    expect(() => norm({ model: "m" })).not.toThrow();
  });

  test("function_call_output with a non-string output is stringified; a string output is kept", () => {
    const out = inputOf(
      norm({
        model: "m",
        input: [
          { type: "function_call_output", call_id: "c1", output: { temp: 21, unit: "C" } },
          { type: "function_call_output", call_id: "c2", output: '{"already":"text"}' },
          { type: "function_call_output", call_id: "c3", output: [1, "two"] },
          { type: "function_call_output", call_id: "c4", output: 42 },
          { type: "function_call_output", call_id: "c5", output: false },
        ],
      }),
    );
    expect(out.map((i) => i.output)).toEqual([
      JSON.stringify({ temp: 21, unit: "C" }),
      '{"already":"text"}',
      JSON.stringify([1, "two"]),
      "42",
      "false",
    ]);
    expect(out.every((i) => typeof i.output === "string")).toBe(true);
  });

  test("function_call_output with a list of content parts keeps the list; text parts become input_text", () => {
    const image = { type: "input_image", image_url: "https://example.com/a.png", detail: "auto" };
    const out = inputOf(
      norm({
        model: "m",
        input: [
          { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text: "a" }, { type: "text", text: "b" }, image] },
          { type: "function_call_output", call_id: "c2", output: [{ type: "output_text", text: "c" }] },
          // Not a list of parts: a part without its text, an unknown part type, an empty list.
          { type: "function_call_output", call_id: "c3", output: [{ type: "input_text" }] },
          { type: "function_call_output", call_id: "c4", output: [{ type: "tool_result", value: 1 }] },
          { type: "function_call_output", call_id: "c5", output: [] },
        ],
      }),
    );
    expect(out[0].output).toEqual([{ type: "input_text", text: "a" }, { type: "input_text", text: "b" }, image]);
    expect(out[1].output).toEqual([{ type: "input_text", text: "c" }]);
    expect(out.slice(2).map((i) => i.output)).toEqual(['[{"type":"input_text"}]', '[{"type":"tool_result","value":1}]', "[]"]);
  });

  test("a message with content null is dropped (the upstream refuses null content); other items stay", () => {
    const out = inputOf(
      norm({
        model: "m",
        input: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null },
          { type: "message", role: "system", content: null },
          { type: "function_call", call_id: "c", name: "f", arguments: "{}", content: null },
          { role: "user", content: "" },
        ],
        tools: [{ type: "function", name: "f" }],
      }),
    );
    expect(out.map((i) => i.type ?? i.role)).toEqual(["user", "function_call", "user"]);
    expect(out[2].content).toEqual([{ type: "input_text", text: "" }]);
  });

  test("other items (function_call, reasoning, references) pass through, without the ids the upstream cannot know", () => {
    const items = [
      { type: "function_call", id: "fc_1", call_id: "c", name: "f", arguments: "{}" },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA" },
      { type: "item_reference", id: "msg_1" },
    ];
    expect(inputOf(norm({ model: "m", input: items, tools: [{ type: "function", name: "f" }] }))).toEqual([
      { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      { type: "reasoning", summary: [], encrypted_content: "gAAA" },
      { type: "item_reference", id: "msg_1" },
    ]);
  });
});

describe("instructions", () => {
  test("absent or null instructions get the default", () => {
    expect(norm({ model: "m" }).instructions).toBe(OPTIONS.defaultInstructions);
    expect(norm({ model: "m", instructions: null as unknown as string }).instructions).toBe(OPTIONS.defaultInstructions);
    expect(norm({ model: "m" }, { defaultInstructions: "Be terse." }).instructions).toBe("Be terse.");
  });

  test("explicit instructions are kept as sent", () => {
    expect(norm({ model: "m", instructions: "Mine." }).instructions).toBe("Mine.");
    expect(norm({ model: "m", instructions: "  Mine, padded.\n" }).instructions).toBe("  Mine, padded.\n");
  });

  test("empty or blank instructions count as absent: the default applies (LlamaIndex sends instructions: \"\")", () => {
    for (const instructions of ["", " ", "\n\t  \r\n", "\u00a0"]) {
      expect(norm({ model: "m", instructions }).instructions).toBe(OPTIONS.defaultInstructions);
      expect(norm({ model: "m", instructions }, { defaultInstructions: "Be terse." }).instructions).toBe("Be terse.");
    }
  });

  test("instructions that are not a string are a 400 on `instructions` (property-test regression)", () => {
    // Found by tests/property/normalize: `instructions: false` used to be forwarded as is, for the upstream to refuse.
    for (const instructions of [false, 0, 42, [], ["a"], { text: "a" }]) {
      let err: unknown;
      try {
        norm({ model: "m", instructions: instructions as unknown as string });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).param).toBe("instructions");
    }
  });
});

describe("include", () => {
  test("reasoning.encrypted_content is added", () => {
    expect(norm({ model: "m" }).include).toEqual(["reasoning.encrypted_content"]);
    expect(norm({ model: "m", include: ["message.output_text.logprobs"] }).include).toEqual([
      "message.output_text.logprobs",
      "reasoning.encrypted_content",
    ]);
  });

  test("without duplicates", () => {
    expect(norm({ model: "m", include: ["reasoning.encrypted_content", "x", "x"] }).include).toEqual([
      "reasoning.encrypted_content",
      "x",
    ]);
  });
});

describe("rebuilt tool definitions", () => {
  let calls = 0;
  const call = (name: string, args: string) => ({ type: "function_call", call_id: `call_${++calls}`, name, arguments: args });

  test("a function_call whose name is not defined gets a definition; defined ones do not", () => {
    const defined = { type: "function", name: "search", description: "Web search", parameters: { type: "object" } };
    const out = norm({
      model: "m",
      tools: [defined],
      input: [call("search", '{"q":"x"}'), call("get_weather", '{"city":"Paris"}')],
    });
    expect(out.tools).toHaveLength(2);
    expect(out.tools![0]).toBe(defined);
    const rebuilt = out.tools![1];
    expect(rebuilt.type).toBe("function");
    expect(rebuilt.name).toBe("get_weather");
    expect(typeof rebuilt.description).toBe("string");
    expect(rebuilt.description.length).toBeGreaterThan(0);
  });

  test("tools are created when the request has none, one per name, in order of first call", () => {
    const out = norm({ model: "m", input: [call("b", "{}"), call("a", "{}"), call("b", '{"x":1}')] });
    expect(out.tools!.map((t) => t.name)).toEqual(["b", "a"]);
  });

  test("a name defined in the Chat shape ({function:{name}}) counts as defined", () => {
    const out = norm({ model: "m", tools: [{ type: "function", function: { name: "f" } }], input: [call("f", "{}")] });
    expect(out.tools).toHaveLength(1);
  });

  test("no function_call items: tools are left as sent (absent stays absent)", () => {
    expect("tools" in norm({ model: "m", input: "hi" })).toBe(false);
    const tools = [{ type: "function", name: "x" }];
    expect(norm({ model: "m", input: "hi", tools }).tools).toBe(tools);
  });

  test("the schema is an open object that accepts every arguments object seen", () => {
    const samples = [
      { city: "Paris", days: 3, metric: true },
      { city: "Oslo", days: 2.5, tags: ["a", "b"], opts: { deep: { x: 1 } } },
      { city: null, tags: [], opts: { deep: { x: "y" }, other: false } },
      {},
    ];
    const out = norm({ model: "m", input: samples.map((s) => call("forecast", JSON.stringify(s))) });
    const params = out.tools![0].parameters;
    expect(params.type).toBe("object");
    expect(params.additionalProperties).toBe(true);
    expect(params.required).toBeUndefined();
    expect(Object.keys(params.properties).sort()).toEqual(["city", "days", "metric", "opts", "tags"]);
    expect(params.properties.city.type).toEqual(["string", "null"]);
    expect(params.properties.days.type).toBe("number");
    expect(params.properties.metric.type).toBe("boolean");
    expect(params.properties.tags.type).toBe("array");
    expect(params.properties.opts.type).toBe("object");
    // Nested objects and array elements are described too, so the model sees the shape it used before.
    expect(params.properties.opts.properties.deep.properties.x.type).toEqual(["number", "string"]);
    expect(params.properties.opts.properties.other.type).toBe("boolean");
    expect(params.properties.tags.items).toEqual({ type: "string" });
    for (const s of samples) expect(accepts(params, s)).toBe(true);
    expect(accepts(params, { city: 42 })).toBe(false);
  });

  test("unparseable or non-object arguments give an open object schema", () => {
    for (const args of ["{not json", "[1,2]", "42", ""]) {
      const params = norm({ model: "m", input: [call("f", args)] }).tools![0].parameters;
      expect(params).toEqual({ type: "object", properties: {}, additionalProperties: true });
    }
  });

  test("unparseable arguments next to parseable ones do not narrow or break the schema", () => {
    const params = norm({ model: "m", input: [call("f", "{oops"), call("f", '{"a":"x"}')] }).tools![0].parameters;
    expect(params.properties.a.type).toBe("string");
    expect(params.additionalProperties).toBe(true);
  });
});

describe("other rules", () => {
  test("tool_choice in object form is passed on unchanged", () => {
    const toolChoice = { type: "function", name: "get_weather" };
    expect(norm({ model: "m", tool_choice: toolChoice }).tool_choice).toEqual({ type: "function", name: "get_weather" });
    expect(norm({ model: "m", tool_choice: "required" }).tool_choice).toBe("required");
  });

  test("stream is forced to true", () => {
    expect(norm({ model: "m", stream: false }).stream).toBe(true);
    expect(norm({ model: "m" }).stream).toBe(true);
  });

  test("reasoning.effort is forced for overridden models, keeping other reasoning fields", () => {
    expect(norm({ model: "gpt-5.4", reasoning: { effort: "low", summary: "auto", extra: 1 } }).reasoning).toEqual({
      effort: "xhigh",
      summary: "auto",
      extra: 1,
    });
    expect(norm({ model: "gpt-5.4" }).reasoning).toEqual({ effort: "xhigh" });
  });

  test("other models keep their reasoning as sent, or none", () => {
    const reasoning = { effort: "low" };
    expect(norm({ model: "gpt-5.4-mini", reasoning }).reasoning).toBe(reasoning);
    expect("reasoning" in norm({ model: "gpt-5.4-mini" })).toBe(false);
    expect("reasoning" in norm({ model: "toString" })).toBe(false);
    expect(norm({ model: "x", reasoning }, { modelOverrides: { x: {} } }).reasoning).toBe(reasoning);
  });

  test("a model that is not a string finds no override and does not throw (property-test regression)", () => {
    // Found by tests/property/normalize: Object.hasOwn(overrides, {"toString": ""}) threw a TypeError while
    // converting the object to a key. (The routes check `model` first; the normaliser must not rely on it.)
    const model = JSON.parse('{"toString":""}');
    expect(norm({ model }).reasoning).toBeUndefined();
  });

  test("stripFields are removed, even fields another rule would set", () => {
    const out = norm(
      { model: "m", temperature: 0.2, max_output_tokens: 100, user: "u", top_p: 1 },
      { stripFields: ["temperature", "max_output_tokens", "user", "instructions"] },
    );
    for (const f of ["temperature", "max_output_tokens", "user", "instructions"]) expect(f in out).toBe(false);
    expect(out.top_p).toBe(1);
  });
});

describe("store", () => {
  test("store is always false upstream, whatever the caller sent", () => {
    expect(norm({ model: "m" }).store).toBe(false);
    expect(norm({ model: "m", store: true }).store).toBe(false);
    expect(norm({ model: "m", store: false }).store).toBe(false);
  });
});

describe("object handling", () => {
  const body = (): ResponsesRequest => ({
    model: "gpt-5.4",
    stream: false,
    input: [
      { role: "system", content: "sys" },
      { type: "message", role: "assistant", content: [{ type: "input_text", text: "a" }] },
      { type: "function_call", call_id: "c", name: "f", arguments: '{"x":1}' },
      { type: "function_call_output", call_id: "c", output: { ok: true } },
    ],
    include: ["reasoning.encrypted_content"],
    reasoning: { effort: "low" },
    tools: [],
    store: false,
    prompt_cache_key: "session-1",
    some_future_field: { nested: [1, 2, 3] },
  });

  test("the input body is not mutated, deeply", () => {
    const original = body();
    const snapshot = structuredClone(original);
    const out = normalizeResponsesRequest(original, { ...OPTIONS, stripFields: ["store"] });
    expect(original).toEqual(snapshot);
    expect(out).not.toBe(original);
    expect(out.input).not.toBe(original.input);
    expect(out.tools).not.toBe(original.tools);
    expect(out.include).not.toBe(original.include);
  });

  test("unknown fields are kept", () => {
    const out = norm(body());
    expect(out.prompt_cache_key).toBe("session-1");
    expect(out.some_future_field).toEqual({ nested: [1, 2, 3] });
    expect(out.store).toBe(false);
    expect(out.model).toBe("gpt-5.4");
  });

  test("unknown fields on items and parts are kept (the item id is not: the upstream stores nothing)", () => {
    const out = inputOf(
      norm({ model: "m", input: [{ role: "user", id: "msg_1", status: "completed", content: [{ type: "text", text: "t", cache_control: { x: 1 } }] }] }),
    );
    expect(out[0]).toEqual({
      role: "user",
      status: "completed",
      content: [{ type: "input_text", text: "t", cache_control: { x: 1 } }],
    });
  });

  test("normalising twice changes nothing more", () => {
    const once = norm(body());
    expect(norm(once)).toEqual(once);
  });
});
