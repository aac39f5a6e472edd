/**
 * The Anthropic Messages request -> Responses request translation (pure): every field's fate, and bad input as a 400
 * invalid_request naming the field.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createHash } from "node:crypto";
import { AppError } from "../../src/errors";
import { messagesToResponses } from "../../src/gateway/translate/messages/messages-to-responses";
import { TOOL_ERROR_PREFIX } from "../../src/gateway/translate/messages/messages-input";
import { signatureOf } from "../../src/gateway/translate/messages/thinking-signature";

const base = { model: "claude-sonnet-4-5", max_tokens: 1024 };

function refused(body: unknown): AppError {
  try {
    messagesToResponses(body);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).code).toBe("invalid_request");
    return err as AppError;
  }
  throw new Error("expected a refusal");
}

describe("system and turns", () => {
  test("system (string or text blocks) and system turns inside messages become instructions, in order", () => {
    const t = messagesToResponses({
      ...base,
      system: [{ type: "text", text: "You are Claude Code." }, { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "system", content: "Project rules." },
        { role: "user", content: "hi" },
      ],
    });
    expect(t.request.instructions).toBe("You are Claude Code.\n\nBe brief.\n\nProject rules.");
    expect(t.request.input).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }]);
    expect(messagesToResponses({ ...base, system: "plain", messages: [{ role: "user", content: "x" }] }).request.instructions).toBe("plain");
  });

  test("no system: no instructions (the default applies later)", () => {
    expect(messagesToResponses({ ...base, messages: [{ role: "user", content: "x" }] }).request.instructions).toBeUndefined();
  });

  test("empty text blocks are dropped, and a turn left with nothing with them", () => {
    const t = messagesToResponses({
      ...base,
      messages: [
        { role: "user", content: [{ type: "text", text: "" }, { type: "text", text: "a" }] },
        { role: "assistant", content: [{ type: "text", text: "" }] },
        { role: "user", content: "" },
      ],
    });
    expect(t.request.input).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "a" }] }]);
  });

  test("images (base64 and URL) and documents (PDF, URL, text, content blocks)", () => {
    const t = messagesToResponses({
      ...base,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
            { type: "image", source: { type: "url", url: "https://example.com/a.jpg" } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBER" }, title: "spec.pdf" },
            { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "plain words" } },
            { type: "document", source: { type: "content", content: [{ type: "text", text: "block words" }, { type: "image", source: { type: "url", url: "https://example.com/d.png" } }] } },
            { type: "text", text: "what are these?" },
          ],
        },
      ],
    });
    expect(t.request.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_image", image_url: "data:image/png;base64,iVBOR", detail: "auto" },
          { type: "input_image", image_url: "https://example.com/a.jpg", detail: "auto" },
          { type: "input_file", filename: "spec.pdf", file_data: "data:application/pdf;base64,JVBER" },
          { type: "input_file", file_url: "https://example.com/a.pdf" },
          { type: "input_text", text: "plain words" },
          { type: "input_text", text: "block words" },
          { type: "input_image", image_url: "https://example.com/d.png", detail: "auto" },
          { type: "input_text", text: "what are these?" },
        ],
      },
    ]);
  });
});

describe("tools", () => {
  const conversation = [
    { role: "user", content: "weather in Paris?" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_2", name: "get_time", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "18°C", cache_control: { type: "ephemeral" } },
        { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "denied" }], is_error: true },
        { type: "text", text: "thanks" },
      ],
    },
  ];

  test("tool_use -> function_call, tool_result -> function_call_output (is_error said in the output), in block order", () => {
    const t = messagesToResponses({ ...base, messages: conversation });
    expect(t.request.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "weather in Paris?" }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
      { type: "function_call", call_id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "toolu_2", name: "get_time", arguments: "{}" },
      { type: "function_call_output", call_id: "toolu_1", output: "18°C" },
      { type: "function_call_output", call_id: "toolu_2", output: TOOL_ERROR_PREFIX + "denied" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "thanks" }] },
    ]);
  });

  test("a tool result with an image is a list of parts", () => {
    const t = messagesToResponses({
      ...base,
      messages: [
        conversation[0],
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "shot", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "here" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AA" } }] }] },
      ],
    });
    expect(t.request.input!.at(-1)).toEqual({
      type: "function_call_output",
      call_id: "t",
      output: [
        { type: "input_text", text: "here" },
        { type: "input_image", image_url: "data:image/png;base64,AA", detail: "auto" },
      ],
    });
  });

  test("tools -> function tools (strict: false), tool_choice auto/any/tool/none, disable_parallel_tool_use", () => {
    const tools = [{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } }, cache_control: { type: "ephemeral" } }];
    const t = messagesToResponses({ ...base, tools, tool_choice: { type: "any", disable_parallel_tool_use: true }, messages: [{ role: "user", content: "x" }] });
    expect(t.request.tools).toEqual([{ type: "function", name: "get_weather", description: "Weather", parameters: tools[0].input_schema, strict: false }]);
    expect(t.request.tool_choice).toBe("required");
    expect(t.request.parallel_tool_calls).toBe(false);
    const choice = (c: unknown) => messagesToResponses({ ...base, tools, tool_choice: c, messages: [{ role: "user", content: "x" }] }).request.tool_choice;
    expect(choice({ type: "auto" })).toBe("auto");
    expect(choice({ type: "none" })).toBe("none");
    expect(choice({ type: "tool", name: "get_weather" })).toEqual({ type: "function", name: "get_weather" });
  });

  test("a tool_result without a matching earlier tool_use is refused", () => {
    const err = refused({ ...base, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "r" }] }] });
    expect(err.param).toBe("messages.0.content.0.tool_use_id");
  });

  test("server tools are refused", () => {
    expect(refused({ ...base, tools: [{ type: "web_search_20250305", name: "web_search" }], messages: [{ role: "user", content: "x" }] }).param).toBe("tools.0.type");
  });
});

describe("thinking", () => {
  test("thinking blocks with Gantry's signature go back as reasoning items; others are dropped cleanly", () => {
    const t = messagesToResponses({
      ...base,
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "pondering", signature: signatureOf("gAAAenc1") },
            { type: "thinking", thinking: "from elsewhere", signature: "EqQBCkYIBxgCKkD" },
            { type: "redacted_thinking", data: signatureOf("gAAAenc2") },
            { type: "redacted_thinking", data: "opaque-anthropic" },
            { type: "text", text: "answer" },
          ],
        },
        { role: "user", content: "more" },
      ],
    });
    expect(t.request.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "q" }] },
      { type: "reasoning", summary: [{ type: "summary_text", text: "pondering" }], encrypted_content: "gAAAenc1" },
      { type: "reasoning", summary: [], encrypted_content: "gAAAenc2" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "answer" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "more" }] },
    ]);
  });

  test("an assistant turn holding only foreign thinking leaves nothing behind (no empty message)", () => {
    const t = messagesToResponses({ ...base, messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "thinking", thinking: "x", signature: "sig" }] }, { role: "user", content: "r" }] });
    expect(t.request.input).toHaveLength(2);
  });

  test("thinking and output_config.effort -> reasoning effort and a summary", () => {
    const r = (extra: object) => messagesToResponses({ ...base, ...extra, messages: [{ role: "user", content: "x" }] });
    expect(r({ thinking: { type: "enabled", budget_tokens: 16000 } }).request.reasoning).toEqual({ effort: "high", summary: "auto" });
    expect(r({ thinking: { type: "enabled", budget_tokens: 6000 } }).request.reasoning).toEqual({ effort: "medium", summary: "auto" });
    expect(r({ thinking: { type: "enabled", budget_tokens: 1024 } }).request.reasoning).toEqual({ effort: "low", summary: "auto" });
    expect(r({ thinking: { type: "adaptive" } }).request.reasoning).toEqual({ summary: "auto" });
    expect(r({ thinking: { type: "adaptive" }, output_config: { effort: "low" } }).request.reasoning).toEqual({ effort: "low", summary: "auto" });
    expect(r({ output_config: { effort: "max" } }).request.reasoning).toEqual({ effort: "high" });
    expect(r({ thinking: { type: "disabled" } }).request.reasoning).toBeUndefined();
    expect(r({ thinking: { type: "adaptive" } }).thinking).toBe(true);
    expect(r({}).thinking).toBe(false);
  });
});

describe("parameters", () => {
  test("max_tokens, temperature, top_p, stop_sequences, stream; top_k dropped", () => {
    const t = messagesToResponses({ ...base, temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ["END", "", "END"], stream: true, messages: [{ role: "user", content: "x" }] });
    expect(t.request.max_output_tokens).toBe(1024);
    expect(t.maxTokens).toBe(1024);
    expect(t.request.temperature).toBe(0.2);
    expect(t.request.top_p).toBe(0.9);
    expect("top_k" in t.request).toBe(false);
    expect(t.stopSequences).toEqual(["END"]);
    expect("stop_sequences" in t.request).toBe(false);
    expect(t.stream).toBe(true);
    expect(t.request.stream).toBe(true);
  });

  test("output_config.format json_schema -> text.format", () => {
    const schema = { type: "object", properties: { title: { type: "string" } } };
    const t = messagesToResponses({ ...base, output_config: { format: { type: "json_schema", schema } }, messages: [{ role: "user", content: "x" }] });
    expect(t.request.text).toEqual({ format: { type: "json_schema", name: "output", schema, strict: false } });
  });

  test("metadata.user_id -> user, hashed when longer than the upstream's limit", () => {
    const short = messagesToResponses({ ...base, metadata: { user_id: "u-1" }, messages: [{ role: "user", content: "x" }] });
    expect(short.request.user).toBe("u-1");
    const long = JSON.stringify({ device_id: "d".repeat(64), session_id: "s" });
    const t = messagesToResponses({ ...base, metadata: { user_id: long }, messages: [{ role: "user", content: "x" }] });
    expect(t.request.user).toBe(createHash("sha256").update(long).digest("hex"));
    expect((t.request.user as string).length).toBeLessThanOrEqual(64);
  });

  test("cache_control, context_management, unknown fields: accepted and not forwarded", () => {
    const t = messagesToResponses({ ...base, context_management: { edits: [] }, service_tier: "auto", some_future_field: 1, messages: [{ role: "user", content: [{ type: "text", text: "x", cache_control: { type: "ephemeral" } }] }] });
    expect(Object.keys(t.request).sort()).toEqual(["input", "max_output_tokens", "model", "stream"]);
  });
});

describe("bad input is a 400 invalid_request naming the field", () => {
  const cases: Array<[string, unknown, string | null]> = [
    ["not an object", [], null],
    ["no model", { max_tokens: 1, messages: [{ role: "user", content: "x" }] }, "model"],
    ["empty messages", { ...base, messages: [] }, "messages"],
    ["messages not an array", { ...base, messages: "hi" }, "messages"],
    ["unknown role", { ...base, messages: [{ role: "tool", content: "x" }] }, "messages.0.role"],
    ["content a number", { ...base, messages: [{ role: "user", content: 5 }] }, "messages.0.content"],
    ["unknown block type", { ...base, messages: [{ role: "user", content: [{ type: "audio", data: "x" }] }] }, "messages.0.content.0.type"],
    ["text not a string", { ...base, messages: [{ role: "user", content: [{ type: "text", text: 1 }] }] }, "messages.0.content.0.text"],
    ["block null", { ...base, messages: [{ role: "user", content: [null] }] }, "messages.0.content.0"],
    ["max_tokens zero", { ...base, max_tokens: 0, messages: [{ role: "user", content: "x" }] }, "max_tokens"],
    ["max_tokens a string", { ...base, max_tokens: "9", messages: [{ role: "user", content: "x" }] }, "max_tokens"],
    ["temperature a string", { ...base, temperature: "hot", messages: [{ role: "user", content: "x" }] }, "temperature"],
    ["stop_sequences not strings", { ...base, stop_sequences: [1], messages: [{ role: "user", content: "x" }] }, "stop_sequences"],
    ["system a number", { ...base, system: 3, messages: [{ role: "user", content: "x" }] }, "system"],
    ["image without source", { ...base, messages: [{ role: "user", content: [{ type: "image" }] }] }, "messages.0.content.0.source"],
    ["non-PDF base64 document", { ...base, messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "text/html", data: "x" } }] }] }, "messages.0.content.0.source.media_type"],
    ["tool_use without id", { ...base, messages: [{ role: "user", content: "x" }, { role: "assistant", content: [{ type: "tool_use", name: "f", input: {} }] }] }, "messages.1.content.0.id"],
    ["tool without input_schema", { ...base, tools: [{ name: "f" }], messages: [{ role: "user", content: "x" }] }, "tools.0.input_schema"],
    ["tool_choice unknown", { ...base, tool_choice: { type: "maybe" }, messages: [{ role: "user", content: "x" }] }, "tool_choice.type"],
    ["thinking budget missing", { ...base, thinking: { type: "enabled" }, messages: [{ role: "user", content: "x" }] }, "thinking.budget_tokens"],
    ["effort unknown", { ...base, output_config: { effort: "extreme" }, messages: [{ role: "user", content: "x" }] }, "output_config.effort"],
    ["metadata.user_id a number", { ...base, metadata: { user_id: 7 }, messages: [{ role: "user", content: "x" }] }, "metadata.user_id"],
  ];
  for (const [name, body, param] of cases) {
    test(name, () => {
      expect(refused(body).param).toBe(param);
    });
  }

  test("property: any JSON body is translated or refused with a 400, never a crash", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.jsonValue(), { maxLength: 4 }), (extra, messages) => {
        for (const body of [extra, { ...base, messages }, { ...base, messages: [{ role: "user", content: messages }] }]) {
          try {
            messagesToResponses(body);
          } catch (err) {
            if (!(err instanceof AppError) || err.status !== 400) throw err;
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
