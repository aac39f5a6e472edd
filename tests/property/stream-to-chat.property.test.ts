import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../src/errors";
import { createResponseCollector } from "../../src/gateway/wire/collect";
import type { ResponseObject, ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { responsesToChat } from "../../src/gateway/translate/responses-to-chat";
import { createChatStreamTranslator } from "../../src/gateway/translate/stream-to-chat";
import { runs } from "./arbitraries";
import { anyEvents, argsOf, eventsOf, streamSpec, textOfPart, type StreamSpec } from "./responses-stream-model";

const OPTS = { id: "chatcmpl-1", created: 1700000000, model: "gpt-x" };

type Obj = Record<string, any>;

interface Run {
  /** Output of each push, in order, then of finish(). */
  perPush: Obj[][];
  all: Obj[];
}

function translate(events: ResponsesStreamEvent[], includeUsage: boolean): Run {
  const t = createChatStreamTranslator({ ...OPTS, includeUsage });
  const perPush: Obj[][] = events.map((ev) => t.push(ev) as Obj[]);
  perPush.push(t.finish() as Obj[]);
  return { perPush, all: perPush.flat() };
}

const isError = (c: Obj) => "error" in c;
const isFinish = (c: Obj) => Array.isArray(c.choices) && c.choices.length > 0 && c.choices[0].finish_reason != null;
const isUsage = (c: Obj) => Array.isArray(c.choices) && c.choices.length === 0;
const isEnding = (c: Obj) => isError(c) || isFinish(c);

/** The stream-level invariants every run must keep, whatever the events were. */
function checkInvariants(run: Run, includeUsage: boolean): void {
  const { all } = run;
  // Exactly one ending (a finish chunk or an error frame) once finish() has been called, and nothing after it
  // but the usage chunk right behind a finish chunk.
  const endings = all.map((c, i) => (isEnding(c) ? i : -1)).filter((i) => i >= 0);
  expect(endings.length).toBe(1);
  const e = endings[0];
  const after = all.slice(e + 1);
  if (isFinish(all[e])) {
    expect(after.length).toBeLessThanOrEqual(1);
    if (after.length === 1) {
      expect(includeUsage).toBe(true);
      expect(isUsage(after[0])).toBe(true);
    }
  } else expect(after).toEqual([]);

  // Every chunk is a well-formed chat chunk of this completion; the first one opens the assistant turn.
  const chunks = all.filter((c) => !isError(c));
  chunks.forEach((c, i) => {
    expect(c).toMatchObject({ id: OPTS.id, object: "chat.completion.chunk", created: OPTS.created, model: OPTS.model });
    if (includeUsage) expect("usage" in c).toBe(true);
    else expect("usage" in c).toBe(false);
    if (isUsage(c)) return;
    expect(c.choices.length).toBe(1);
    expect(c.choices[0].index).toBe(0);
    if (i === 0) expect(c.choices[0].delta).toEqual({ role: "assistant", content: "" });
    else expect("role" in c.choices[0].delta).toBe(false);
  });

  // Tool-call indexes are 0..n-1 in order of first appearance; a call's first delta names it.
  const seen = new Set<number>();
  for (const c of chunks) {
    for (const tc of c.choices?.[0]?.delta?.tool_calls ?? []) {
      expect(Number.isInteger(tc.index)).toBe(true);
      if (!seen.has(tc.index)) {
        expect(tc.index).toBe(seen.size);
        seen.add(tc.index);
        expect(tc.type).toBe("function");
        expect("id" in tc && "name" in tc.function).toBe(true);
      } else {
        expect("id" in tc || "name" in tc.function).toBe(false);
      }
      expect(typeof tc.function.arguments).toBe("string");
    }
  }
  if (isFinish(all[e]) && all[e].choices[0].finish_reason === "tool_calls") expect(seen.size).toBeGreaterThan(0);
}

/** What the client assembles from the chunks, as an SDK would. */
function assemble(all: Obj[]) {
  let content = "";
  let refusal = "";
  let reasoning = "";
  const calls: Array<{ id: unknown; name: unknown; arguments: string }> = [];
  let finish: string | null = null;
  let usage: unknown = null;
  let error: Obj | null = null;
  for (const c of all) {
    if (isError(c)) error = c.error;
    else if (isUsage(c)) usage = c.usage;
    else {
      const d = c.choices[0].delta;
      content += d.content ?? "";
      refusal += d.refusal ?? "";
      reasoning += d.reasoning_content ?? "";
      for (const tc of d.tool_calls ?? []) {
        calls[tc.index] ??= { id: tc.id, name: tc.function.name, arguments: "" };
        calls[tc.index].arguments += tc.function.arguments;
      }
      finish = c.choices[0].finish_reason ?? finish;
    }
  }
  return { content, refusal, reasoning, calls, finish, usage, error };
}

function expectedOf(spec: StreamSpec) {
  const messages = spec.items.filter((it) => it.kind === "message");
  const parts = messages.flatMap((m) => m.parts);
  const calls = spec.items.filter((it) => it.kind === "function_call");
  const summaries = spec.items.flatMap((it) => (it.kind === "reasoning" ? it.summaries.map((s) => s.join("")) : [])).filter((s) => s !== "");
  let finish: string | null = null;
  const e = spec.ending;
  if (e.kind === "completed" || e.kind === "incomplete") {
    finish = calls.length > 0 ? "tool_calls" : "stop";
    if (e.kind === "incomplete" && e.reason === "max_output_tokens") finish = "length";
    if (e.kind === "incomplete" && e.reason === "content_filter") finish = "content_filter";
  }
  return {
    content: parts.filter((p) => p.kind === "output_text").map(textOfPart).join(""),
    refusal: parts.filter((p) => p.kind === "refusal").map(textOfPart).join(""),
    reasoning: summaries.join("\n\n"),
    calls: calls.map((c) => ({ id: c.callId, name: c.name, arguments: argsOf(c) })),
    finish,
  };
}

/** Arguments as a client reads them: an argument-less call must still parse. */
const sameArguments = (streamed: string, expected: string) =>
  expected.trim() === "" ? streamed.trim() === "{}" : streamed === expected;

describe("stream-to-chat: arbitrary event sequences", () => {
  test("never throws; one ending, nothing after it; the role chunk first; tool-call indexes 0..n-1 in order of appearance", () => {
    fc.assert(
      fc.property(anyEvents, fc.boolean(), (events, includeUsage) => {
        checkInvariants(translate(events, includeUsage), includeUsage);
      }),
      runs(700),
    );
  });

  test("fail() at any point: one ending in all, and nothing after it", () => {
    fc.assert(
      fc.property(anyEvents, fc.nat(), fc.boolean(), (events, cut, includeUsage) => {
        const t = createChatStreamTranslator({ ...OPTS, includeUsage });
        const at = cut % (events.length + 1);
        const out: Obj[] = [];
        for (const ev of events.slice(0, at)) out.push(...(t.push(ev) as Obj[]));
        out.push(...(t.fail({ message: "reset", type: "upstream_error", code: "upstream_stream_error" }) as Obj[]));
        for (const ev of events.slice(at)) expect(t.push(ev)).toEqual([]);
        expect(t.finish()).toEqual([]);
        expect(t.fail({ message: "again", type: "x", code: "y" })).toEqual([]);
        checkInvariants({ perPush: [out], all: out }, includeUsage);
      }),
      runs(300),
    );
  });
});

describe("stream-to-chat: valid streams", () => {
  test("the client assembles exactly the text, refusal, reasoning, calls and finish reason of the stream", () => {
    fc.assert(
      fc.property(streamSpec, fc.boolean(), (spec, includeUsage) => {
        const run = translate(eventsOf(spec), includeUsage);
        const got = assemble(run.all);
        const want = expectedOf(spec);
        expect(got.content).toBe(want.content);
        expect(got.refusal).toBe(want.refusal);
        expect(got.reasoning).toBe(want.reasoning);
        expect(got.calls.map((c) => ({ id: c.id, name: c.name }))).toEqual(want.calls.map((c) => ({ id: c.id, name: c.name })));
        got.calls.forEach((c, i) => expect(sameArguments(c.arguments, want.calls[i].arguments)).toBe(true));
        expect(got.finish).toBe(want.finish);
        if (want.finish === null) {
          expect(got.error).not.toBeNull();
          const e = spec.ending;
          // Read as the ledger reads it (upstream-events.ts): a nested error without a code is named by its type.
          if (e.kind === "failed") expect(got.error!.code).toBe(e.code || "upstream_error");
          if (e.kind === "error") expect(got.error!.code).toBe(e.code || (e.nested ? "server_error" : "upstream_error"));
          if (e.kind === "none") expect(got.error!.code).toBe("upstream_error");
        }
        const wantUsage = includeUsage && want.finish !== null && spec.usage !== null;
        expect(got.usage !== null).toBe(wantUsage);
        if (wantUsage) expect(got.usage).toMatchObject({ prompt_tokens: spec.usage!.input_tokens, completion_tokens: spec.usage!.output_tokens });
      }),
      runs(500),
    );
  });

  test("streaming and non-streaming replies agree (stream-to-chat vs collector + responses-to-chat)", () => {
    fc.assert(
      fc.property(streamSpec, (spec) => {
        const events = eventsOf(spec);
        const streamed = assemble(translate(events, true).all);
        const collector = createResponseCollector();
        for (const ev of events) collector.push(ev);
        let completion: ReturnType<typeof responsesToChat>;
        try {
          completion = responsesToChat(collector.result() as ResponseObject, OPTS);
        } catch (err) {
          // Only an unfinished or failed response is refused, and the stream then ended in an error too.
          expect(err).toBeInstanceOf(AppError);
          expect(streamed.finish).toBeNull();
          expect(streamed.error).not.toBeNull();
          return;
        }
        const choice = completion.choices[0];
        expect(streamed.finish).toBe(choice.finish_reason);
        expect(streamed.content).toBe(choice.message.content ?? "");
        expect(streamed.refusal).toBe(choice.message.refusal ?? "");
        expect(streamed.reasoning).toBe(choice.message.reasoning_content ?? "");
        const calls = choice.message.tool_calls ?? [];
        expect(streamed.calls.map((c) => [c.id, c.name])).toEqual(calls.map((c) => [c.id, c.function.name]));
        streamed.calls.forEach((c, i) => expect(JSON.stringify(c.arguments.trim())).toBe(JSON.stringify(calls[i].function.arguments.trim())));
        expect(streamed.usage).toEqual(completion.usage ?? null);
      }),
      runs(500),
    );
  });
});
