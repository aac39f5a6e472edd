import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { chatToResponses, DROPPED_CHAT_FIELDS } from "../../src/gateway/translate/chat-to-responses";

const MODEL = "gpt-test";

function translate(extra: Record<string, unknown>, messages: unknown[] = [{ role: "user", content: "hi" }]) {
  return chatToResponses({ model: MODEL, messages, ...extra });
}

function errorOf(body: unknown): AppError {
  try {
    chatToResponses(body);
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected chatToResponses to throw");
}

const userText = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

describe("system and developer messages", () => {
  test("leading system/developer messages are joined into instructions in order", () => {
    const { request } = translate({}, [
      { role: "system", content: "Be brief." },
      { role: "developer", content: [{ type: "text", text: "Answer in French." }] },
      { role: "user", content: "hi" },
    ]);
    expect(request.instructions).toBe("Be brief.\n\nAnswer in French.");
    expect(request.input).toEqual([userText("hi")]);
  });

  test("a system message after the conversation started stays in place as a developer message", () => {
    const { request } = translate({}, [
      { role: "system", content: "First." },
      { role: "user", content: "a" },
      { role: "system", content: "Now switch to English." },
      { role: "user", content: "b" },
    ]);
    expect(request.instructions).toBe("First.");
    expect(request.input).toEqual([
      userText("a"),
      { type: "message", role: "developer", content: [{ type: "input_text", text: "Now switch to English." }] },
      userText("b"),
    ]);
  });

  test("blank system and developer messages are left out, leading or later (an empty leading one leaves the default to normalisation)", () => {
    const { request } = translate({}, [
      { role: "system", content: "" },
      { role: "developer", content: [{ type: "text", text: "  \n" }] },
      { role: "user", content: "a" },
      { role: "system", content: " " },
      { role: "system", content: null },
      { role: "user", content: "b" },
    ]);
    expect("instructions" in request).toBe(false);
    expect(request.input).toEqual([userText("a"), userText("b")]);
    const kept = translate({}, [
      { role: "system", content: "\t" },
      { role: "system", content: "Real." },
      { role: "user", content: "a" },
    ]).request;
    expect(kept.instructions).toBe("Real.");
  });

  test("without system messages no instructions key is set, leaving the default to normalisation", () => {
    const { request } = translate({});
    expect("instructions" in request).toBe(false);
  });
});

describe("user content", () => {
  test("a string becomes one input_text part", () => {
    expect(translate({}).request.input).toEqual([userText("hi")]);
  });

  test("images by URL and data URL keep their detail, defaulting to auto", () => {
    const dataUrl = "data:image/png;base64,iVBORw0KGgo=";
    const { request } = translate({}, [
      {
        role: "user",
        content: [
          { type: "text", text: "compare" },
          { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "high" } },
          { type: "image_url", image_url: { url: dataUrl } },
        ],
      },
    ]);
    expect(request.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "compare" },
          { type: "input_image", image_url: "https://example.com/a.png", detail: "high" },
          { type: "input_image", image_url: dataUrl, detail: "auto" },
        ],
      },
    ]);
  });

  test("an empty data URL is refused with the param path", () => {
    const err = errorOf({
      model: MODEL,
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64," } }] }],
    });
    expect(err.status).toBe(400);
    expect(err.param).toBe("messages[0].content[0].image_url.url");
  });

  test("file parts with data or id become input_file; without either they are refused", () => {
    const { request } = translate({}, [
      { role: "user", content: [{ type: "file", file: { file_data: "data:application/pdf;base64,JVBER", filename: "a.pdf" } }] },
    ]);
    expect(request.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_file", file_data: "data:application/pdf;base64,JVBER", filename: "a.pdf" }] },
    ]);
    const err = errorOf({ model: MODEL, messages: [{ role: "user", content: [{ type: "file", file: { filename: "a.pdf" } }] }] });
    expect(err.param).toBe("messages[0].content[0].file");
  });

  test("audio input and unknown part types are refused naming the part", () => {
    const audio = errorOf({
      model: MODEL,
      messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "input_audio", input_audio: { data: "", format: "wav" } }] }],
    });
    expect(audio.code).toBe("invalid_request");
    expect(audio.param).toBe("messages[0].content[1].type");
    const unknown = errorOf({ model: MODEL, messages: [{ role: "user", content: [{ type: "video", url: "x" }] }] });
    expect(unknown.param).toBe("messages[0].content[0].type");
  });
});

describe("assistant history and tool results", () => {
  const history = [
    { role: "user", content: "weather in Paris and Rome?" },
    {
      role: "assistant",
      content: "Let me check.",
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
        { id: "call_b", type: "function", function: { name: "weather", arguments: "" } },
      ],
    },
    { role: "tool", tool_call_id: "call_a", content: "18C" },
    { role: "tool", tool_call_id: "call_b", content: [{ type: "text", text: "21C" }, { type: "text", text: "sunny" }] },
    { role: "assistant", content: null, refusal: "I can't share that." },
  ];

  test("text becomes output_text before one function_call per tool call, and results follow", () => {
    const { request } = translate({}, history);
    expect(request.input).toEqual([
      userText("weather in Paris and Rome?"),
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me check." }] },
      { type: "function_call", call_id: "call_a", name: "weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "call_b", name: "weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_a", output: "18C" },
      { type: "function_call_output", call_id: "call_b", output: "21C\nsunny" },
      { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "I can't share that." }] },
    ]);
  });

  test("an assistant turn with only tool calls and null content emits no empty message", () => {
    const { request } = translate({}, [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_x", type: "function", function: { name: "f", arguments: "{}" } }] },
    ]);
    expect(request.input).toEqual([userText("go"), { type: "function_call", call_id: "call_x", name: "f", arguments: "{}" }]);
  });

  test("tool results answering no earlier call are dropped", () => {
    const { request } = translate({}, [
      { role: "user", content: "go" },
      { role: "tool", tool_call_id: "call_early", content: "before its call" },
      { role: "assistant", tool_calls: [{ id: "call_early", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_unknown", content: "orphan" },
      { role: "tool", tool_call_id: "call_early", content: "ok" },
    ]);
    const outputs = (request.input as any[]).filter((item) => item.type === "function_call_output");
    expect(outputs).toEqual([{ type: "function_call_output", call_id: "call_early", output: "ok" }]);
  });

  test("legacy functions, function_call and function-role results map with the name as call id", () => {
    const { request } = translate(
      {
        functions: [{ name: "lookup", description: "Look up", parameters: { type: "object", properties: {} } }],
        function_call: { name: "lookup" },
      },
      [
        { role: "user", content: "find it" },
        { role: "assistant", content: null, function_call: { name: "lookup", arguments: '{"q":"x"}' } },
        { role: "function", name: "lookup", content: "found" },
        { role: "function", name: "never_called", content: "dropped" },
      ],
    );
    expect(request.tools).toEqual([
      { type: "function", name: "lookup", description: "Look up", parameters: { type: "object", properties: {} }, strict: false },
    ]);
    expect(request.tool_choice).toEqual({ type: "function", name: "lookup" });
    expect(request.input).toEqual([
      userText("find it"),
      { type: "function_call", call_id: "lookup", name: "lookup", arguments: '{"q":"x"}' },
      { type: "function_call_output", call_id: "lookup", output: "found" },
    ]);
    expect(translate({ function_call: "none" }).request.tool_choice).toBe("none");
  });
});

describe("tools and tool_choice", () => {
  test("function tools are flattened; a missing strict becomes false, an explicit one is kept", () => {
    const params = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    const { request } = translate({
      tools: [
        { type: "function", function: { name: "weather", description: "Weather", parameters: params } },
        { type: "function", function: { name: "exact", parameters: params, strict: true } },
      ],
      parallel_tool_calls: false,
    });
    expect(request.tools).toEqual([
      { type: "function", name: "weather", description: "Weather", parameters: params, strict: false },
      { type: "function", name: "exact", parameters: params, strict: true },
    ]);
    expect(request.parallel_tool_calls).toBe(false);
  });

  test("tool_choice strings pass through and the named form is flattened", () => {
    for (const choice of ["auto", "none", "required"]) expect(translate({ tool_choice: choice }).request.tool_choice).toBe(choice);
    expect(translate({ tool_choice: { type: "function", function: { name: "weather" } } }).request.tool_choice).toEqual({
      type: "function",
      name: "weather",
    });
    expect(
      translate({
        tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "a" } }] } },
      }).request.tool_choice,
    ).toEqual({ type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "a" }] });
  });

  test("non-function tools and malformed choices are refused naming the param", () => {
    expect(errorOf({ model: MODEL, messages: [{ role: "user", content: "x" }], tools: [{ type: "custom", custom: { name: "c" } }] }).param).toBe(
      "tools[0].type",
    );
    expect(errorOf({ model: MODEL, messages: [{ role: "user", content: "x" }], tool_choice: { type: "function", function: {} } }).param).toBe(
      "tool_choice.function.name",
    );
    expect(errorOf({ model: MODEL, messages: [{ role: "user", content: "x" }], tool_choice: "sometimes" }).param).toBe("tool_choice");
  });
});

describe("response_format", () => {
  test("text and json_object map to text.format", () => {
    expect(translate({ response_format: { type: "text" } }).request.text).toEqual({ format: { type: "text" } });
    expect(translate({ response_format: { type: "json_object" } }).request.text).toEqual({ format: { type: "json_object" } });
  });

  test("json_schema is flattened beside type", () => {
    const schema = { type: "object", properties: { a: { type: "number" } }, required: ["a"], additionalProperties: false };
    const { request } = translate({
      response_format: { type: "json_schema", json_schema: { name: "answer", description: "The answer", schema, strict: true } },
      verbosity: "low",
    });
    expect(request.text).toEqual({
      format: { type: "json_schema", name: "answer", schema, strict: true, description: "The answer" },
      verbosity: "low",
    });
  });

  test("unknown format types and a schema without a name are refused", () => {
    const base = { model: MODEL, messages: [{ role: "user", content: "x" }] };
    expect(errorOf({ ...base, response_format: { type: "yaml" } }).param).toBe("response_format.type");
    expect(errorOf({ ...base, response_format: { type: "json_schema", json_schema: { schema: {} } } }).param).toBe(
      "response_format.json_schema.name",
    );
  });
});

describe("sampling, limits and other fields", () => {
  test("max_tokens maps to max_output_tokens; max_completion_tokens wins when both are sent", () => {
    expect(translate({ max_tokens: 100 }).request.max_output_tokens).toBe(100);
    expect(translate({ max_tokens: 100, max_completion_tokens: 50 }).request.max_output_tokens).toBe(50);
    expect(errorOf({ model: MODEL, messages: [{ role: "user", content: "x" }], max_tokens: 0 }).param).toBe("max_tokens");
  });

  test("reasoning_effort and pass-through fields are forwarded", () => {
    const { request } = translate({
      reasoning_effort: "high",
      temperature: 0.3,
      top_p: 0.9,
      user: "u-1",
      metadata: { team: "a" },
    });
    // A summary is asked for, so reasoning_content deltas can reach the chat client.
    expect(request.reasoning).toEqual({ effort: "high", summary: "auto" });
    expect(translate({ reasoning_effort: "none" }).request.reasoning).toEqual({ effort: "none" });
    expect(request).toMatchObject({ temperature: 0.3, top_p: 0.9, user: "u-1", metadata: { team: "a" } });
  });

  test("dropped fields never reach the upstream request, and each has a reason", () => {
    const topLevel = Object.keys(DROPPED_CHAT_FIELDS).filter((f) => !f.includes("."));
    expect(topLevel.length).toBeGreaterThan(5);
    const body: Record<string, unknown> = {};
    for (const field of topLevel) body[field] = field === "stop" ? ["\n"] : 1;
    const { request } = translate(body);
    for (const field of topLevel) expect(field in request).toBe(false);
    for (const reason of Object.values(DROPPED_CHAT_FIELDS)) expect(reason.length).toBeGreaterThan(10);
  });

  test("n > 1 and audio output are refused; n = 1 and text modality are accepted", () => {
    const base = { model: MODEL, messages: [{ role: "user", content: "x" }] };
    expect(errorOf({ ...base, n: 2 }).param).toBe("n");
    expect(errorOf({ ...base, modalities: ["text", "audio"] }).param).toBe("modalities");
    expect(() => chatToResponses({ ...base, n: 1, modalities: ["text"] })).not.toThrow();
  });

  test("stream flags: the upstream always streams, usage is requested only for streaming clients", () => {
    const streaming = translate({ stream: true, stream_options: { include_usage: true } });
    expect(streaming).toMatchObject({ stream: true, includeUsage: true });
    expect(streaming.request.stream).toBe(true);
    expect("stream_options" in streaming.request).toBe(false);
    const plain = translate({ stream: false, stream_options: { include_usage: true } });
    expect(plain).toMatchObject({ stream: false, includeUsage: false });
    expect(plain.request.stream).toBe(true);
  });
});

describe("bad shapes", () => {
  const cases: Array<[string, unknown, string | null]> = [
    ["body not an object", [1, 2], null],
    ["missing model", { messages: [] }, "model"],
    ["messages not an array", { model: MODEL, messages: "hi" }, "messages"],
    ["empty messages", { model: MODEL, messages: [] }, "messages"],
    ["message not an object", { model: MODEL, messages: ["hi"] }, "messages[0]"],
    ["message without role", { model: MODEL, messages: [{ role: "user", content: "a" }, { content: "b" }] }, "messages[1].role"],
    ["unknown role", { model: MODEL, messages: [{ role: "robot", content: "a" }] }, "messages[0].role"],
    [
      "tool message without tool_call_id",
      {
        model: MODEL,
        messages: [
          { role: "user", content: "a" },
          { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
          { role: "tool", content: "r" },
        ],
      },
      "messages[2].tool_call_id",
    ],
    [
      "tool call without id",
      { model: MODEL, messages: [{ role: "assistant", tool_calls: [{ type: "function", function: { name: "f" } }] }] },
      "messages[0].tool_calls[0].id",
    ],
    ["user content null", { model: MODEL, messages: [{ role: "user", content: null }] }, "messages[0].content"],
    ["image part in a system message", { model: MODEL, messages: [{ role: "system", content: [{ type: "image_url" }] }] }, "messages[0].content[0].type"],
  ];
  for (const [name, body, param] of cases) {
    test(name, () => {
      const err = errorOf(body);
      expect(err.status).toBe(400);
      expect(err.code).toBe("invalid_request");
      expect(err.param).toBe(param);
    });
  }
});
