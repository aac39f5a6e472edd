/**
 * A model of valid Responses event streams (what the upstream sends), the events it produces, and ways to
 * damage a stream (junk events, dropped, duplicated or reordered events, events after the end). Used by the
 * stream-to-chat, responses-to-chat and collector properties.
 */
import fc from "fast-check";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { jsonObjectOf, junkJson, orJunk, ownObject, trickyString } from "./arbitraries";

export type PartSpec = { kind: "output_text" | "refusal"; chunks: string[] };
export type ItemSpec =
  | { kind: "message"; id: string; parts: PartSpec[] }
  | { kind: "function_call"; id: string; callId: string; name: string; chunks: string[] }
  | { kind: "reasoning"; id: string; summaries: string[][] };
export type Ending =
  | { kind: "completed" }
  | { kind: "incomplete"; reason: "max_output_tokens" | "content_filter" | "other" }
  | { kind: "failed"; code: string; message: string }
  | { kind: "error"; nested: boolean; code: string; message: string }
  | { kind: "none" };

export interface StreamSpec {
  items: ItemSpec[];
  ending: Ending;
  /** The upstream's terminal `output` is sometimes empty (or short) even though items streamed. */
  terminalOutput: "full" | "empty" | "partial";
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
}

const chunk = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("Hel", "lo", " ", "wörld", "👋", "\n", "<", "tool", '{"a":', "1}", "") },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const chunks = fc.array(chunk, { maxLength: 5 });

const itemSpec: fc.Arbitrary<ItemSpec> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .array(fc.record({ kind: fc.constantFrom<"output_text" | "refusal">("output_text", "output_text", "refusal"), chunks }), { minLength: 1, maxLength: 2 })
      .map((parts) => ({ kind: "message" as const, id: "", parts })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        name: fc.constantFrom("get_weather", "search", "x"),
        chunks: fc.oneof(chunks, fc.constant<string[]>(['{"city":', '"Paris"}']), fc.constant<string[]>([])),
      })
      .map(({ name, chunks }) => ({ kind: "function_call" as const, id: "", callId: "", name, chunks })),
  },
  { weight: 1, arbitrary: fc.array(chunks, { maxLength: 2 }).map((summaries) => ({ kind: "reasoning" as const, id: "", summaries })) },
);

const ending: fc.Arbitrary<Ending> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "completed" as const }) },
  { weight: 2, arbitrary: fc.constantFrom("max_output_tokens", "content_filter", "other").map((reason) => ({ kind: "incomplete" as const, reason })) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("failed" as const), code: fc.constantFrom("server_error", "rate_limit_exceeded", ""), message: fc.constantFrom("boom", "") }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("error" as const), nested: fc.boolean(), code: fc.constantFrom("server_error", ""), message: fc.constantFrom("bad", "") }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "none" as const }) },
);

export const streamSpec: fc.Arbitrary<StreamSpec> = fc
  .record({
    items: fc.array(itemSpec, { maxLength: 5 }),
    ending,
    terminalOutput: fc.constantFrom<"full" | "empty" | "partial">("full", "full", "empty", "partial"),
    usage: fc.option(
      fc.record({ input_tokens: fc.nat(1000), output_tokens: fc.nat(1000) }).map((u) => ({ ...u, total_tokens: u.input_tokens + u.output_tokens })),
      { nil: null },
    ),
  })
  .map((s) => {
    // Ids are a function of position, so equal specs give equal streams.
    s.items = s.items.map((it, i) =>
      it.kind === "function_call" ? { ...it, id: `fc_${i}`, callId: `call_${i}` } : { ...it, id: `${it.kind === "message" ? "msg" : "rs"}_${i}` },
    );
    return s;
  });

export const textOfPart = (p: PartSpec) => p.chunks.join("");
export const argsOf = (it: Extract<ItemSpec, { kind: "function_call" }>) => it.chunks.join("");

/** The completed form of an item, as output_item.done and the terminal output carry it. */
export function finalItem(it: ItemSpec): Record<string, unknown> {
  switch (it.kind) {
    case "message":
      return {
        id: it.id,
        type: "message",
        role: "assistant",
        status: "completed",
        content: it.parts.map((p) =>
          p.kind === "output_text" ? { type: "output_text", text: textOfPart(p), annotations: [] } : { type: "refusal", refusal: textOfPart(p) },
        ),
      };
    case "function_call":
      return { id: it.id, type: "function_call", status: "completed", call_id: it.callId, name: it.name, arguments: argsOf(it) };
    case "reasoning":
      return { id: it.id, type: "reasoning", summary: it.summaries.map((s) => ({ type: "summary_text", text: s.join("") })) };
  }
}

export function responseObject(spec: StreamSpec, status: string, withOutput: boolean | "partial"): Record<string, unknown> {
  const r: Record<string, unknown> = {
    id: "resp_1",
    object: "response",
    created_at: 1700000000,
    status,
    error: null,
    incomplete_details: null,
    model: "gpt-x",
    output: withOutput === "partial" ? spec.items.slice(0, Math.floor(spec.items.length / 2)).map(finalItem) : withOutput ? spec.items.map(finalItem) : [],
    usage: status === "in_progress" ? null : spec.usage,
  };
  return r;
}

/**
 * The events of a stream, in the order a real upstream sends them; `order` (a permutation of item positions)
 * sends the items' events in another order, each item keeping its output_index.
 */
export function eventsOf(spec: StreamSpec, order?: number[]): ResponsesStreamEvent[] {
  const evs: Array<Record<string, unknown> & { type: string }> = [];
  evs.push({ type: "response.created", response: responseObject(spec, "in_progress", false) });
  evs.push({ type: "response.in_progress", response: responseObject(spec, "in_progress", false) });
  (order ?? spec.items.map((_, i) => i)).forEach((oi) => {
    const it = spec.items[oi];
    const base = { item_id: it.id, output_index: oi };
    if (it.kind === "message") {
      evs.push({ type: "response.output_item.added", output_index: oi, item: { id: it.id, type: "message", role: "assistant", status: "in_progress", content: [] } });
      it.parts.forEach((p, ci) => {
        const empty = p.kind === "output_text" ? { type: "output_text", text: "", annotations: [] } : { type: "refusal", refusal: "" };
        evs.push({ type: "response.content_part.added", ...base, content_index: ci, part: empty });
        const kind = p.kind === "output_text" ? "output_text" : "refusal";
        for (const c of p.chunks) evs.push({ type: `response.${kind}.delta`, ...base, content_index: ci, delta: c });
        evs.push(
          p.kind === "output_text"
            ? { type: "response.output_text.done", ...base, content_index: ci, text: textOfPart(p) }
            : { type: "response.refusal.done", ...base, content_index: ci, refusal: textOfPart(p) },
        );
        evs.push({ type: "response.content_part.done", ...base, content_index: ci, part: (finalItem(it).content as unknown[])[ci] });
      });
    } else if (it.kind === "function_call") {
      evs.push({
        type: "response.output_item.added",
        output_index: oi,
        item: { id: it.id, type: "function_call", status: "in_progress", call_id: it.callId, name: it.name, arguments: "" },
      });
      for (const c of it.chunks) evs.push({ type: "response.function_call_arguments.delta", ...base, delta: c });
      evs.push({ type: "response.function_call_arguments.done", ...base, arguments: argsOf(it) });
    } else {
      evs.push({ type: "response.output_item.added", output_index: oi, item: { id: it.id, type: "reasoning", summary: [] } });
      it.summaries.forEach((s, si) => {
        evs.push({ type: "response.reasoning_summary_part.added", ...base, summary_index: si, part: { type: "summary_text", text: "" } });
        for (const c of s) evs.push({ type: "response.reasoning_summary_text.delta", ...base, summary_index: si, delta: c });
        evs.push({ type: "response.reasoning_summary_text.done", ...base, summary_index: si, text: s.join("") });
        evs.push({ type: "response.reasoning_summary_part.done", ...base, summary_index: si, part: { type: "summary_text", text: s.join("") } });
      });
    }
    evs.push({ type: "response.output_item.done", output_index: oi, item: finalItem(it) });
  });
  const full = spec.terminalOutput === "partial" ? "partial" : spec.terminalOutput === "full";
  const e = spec.ending;
  if (e.kind === "completed") evs.push({ type: "response.completed", response: responseObject(spec, "completed", full) });
  else if (e.kind === "incomplete") {
    evs.push({ type: "response.incomplete", response: { ...responseObject(spec, "incomplete", full), incomplete_details: { reason: e.reason } } });
  } else if (e.kind === "failed") {
    evs.push({ type: "response.failed", response: { ...responseObject(spec, "failed", false), error: { code: e.code, message: e.message } } });
  } else if (e.kind === "error") {
    evs.push(e.nested ? { type: "error", error: { type: "server_error", code: e.code, message: e.message } } : { type: "error", code: e.code, message: e.message, param: null });
  }
  return evs.map((ev, i) => ({ ...ev, sequence_number: i }));
}

// ---- damage ---------------------------------------------------------------------------------------------

const EVENT_TYPES = [
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.output_item.done",
  "response.content_part.added",
  "response.content_part.done",
  "response.output_text.delta",
  "response.output_text.done",
  "response.refusal.delta",
  "response.refusal.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.reasoning_summary_part.added",
  "response.reasoning_summary_part.done",
  "response.reasoning_summary_text.delta",
  "response.reasoning_summary_text.done",
  "response.reasoning_text.delta",
  "response.completed",
  "response.incomplete",
  "response.failed",
  "error",
  "codex.rate_limits",
  "",
  "constructor",
];

const EVENT_FIELDS = [
  "output_index",
  "content_index",
  "summary_index",
  "item_id",
  "item",
  "part",
  "delta",
  "text",
  "refusal",
  "arguments",
  "response",
  "error",
  "code",
  "message",
];

/** A small index, or junk where an index should be. */
const index = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -1, max: 4 }) }, { weight: 1, arbitrary: junkJson([], 1) });
const junkPart = orJunk(jsonObjectOf({ type: fc.constantFrom("output_text", "refusal", "summary_text"), text: junkJson(), refusal: junkJson() }));
const junkItem = fc.oneof(
  junkJson(["type", "content", "arguments", "call_id", "name", "summary"], 2),
  jsonObjectOf(
    {
      type: fc.constantFrom("message", "function_call", "reasoning"),
      content: fc.oneof(fc.array(junkPart, { maxLength: 3 }), junkJson()),
      arguments: junkJson(),
      call_id: junkJson(),
      name: junkJson(),
      summary: fc.oneof(fc.array(junkPart, { maxLength: 2 }), junkJson()),
    },
    [],
    1,
    ["type"],
  ),
);
const junkResponse = fc.oneof(
  junkJson(["status", "output", "usage", "error", "incomplete_details"], 2),
  fc.record(
    {
      status: fc.constantFrom("completed", "incomplete", "failed", "in_progress", "queued"),
      output: fc.oneof(fc.array(junkItem, { maxLength: 3 }), junkJson()),
      usage: fc.oneof(
        junkJson(["input_tokens", "output_tokens"], 2),
        jsonObjectOf({ input_tokens: orJunk(fc.nat(99)), output_tokens: orJunk(fc.nat(99)), total_tokens: orJunk(fc.nat(99)) }),
      ),
      error: junkJson(["code", "message"], 1),
      incomplete_details: fc.oneof(fc.constant({ reason: "max_output_tokens" }), junkJson()),
    },
    { requiredKeys: [] },
  ),
);

/** An event of a known (or unknown) type with any of the usual fields, each plausible or junk. */
export const junkEvent: fc.Arbitrary<ResponsesStreamEvent> = fc
  .tuple(
    fc.constantFrom(...EVENT_TYPES),
    fc.record(
      {
        output_index: index,
        content_index: index,
        summary_index: index,
        item_id: fc.oneof(fc.constantFrom("msg_0", "fc_1", "rs_2", "x"), junkJson([], 1)),
        item: junkItem,
        part: junkJson(["type", "text", "refusal"], 2),
        delta: fc.oneof(trickyString, junkJson()),
        text: fc.oneof(trickyString, junkJson()),
        refusal: fc.oneof(trickyString, junkJson()),
        arguments: fc.oneof(trickyString, junkJson()),
        response: junkResponse,
        error: junkJson(["code", "message", "type", "param"], 2),
        code: junkJson(),
        message: junkJson(),
      },
      { requiredKeys: [] },
    ),
    fc.array(fc.tuple(fc.constantFrom(...EVENT_FIELDS, "__proto__", "toString"), junkJson([], 1)), { maxLength: 2 }),
  )
  .map(([type, fields, extra]) => ownObject([["type", type], ...Object.entries(fields), ...extra]) as ResponsesStreamEvent);

export type Damage = { kind: "insert"; at: number; ev: ResponsesStreamEvent } | { kind: "drop"; at: number } | { kind: "dup"; at: number } | { kind: "swap"; at: number };

const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), ev: junkEvent }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("dup" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("swap" as const), at: fc.nat() }) },
);

export function applyDamage(events: ResponsesStreamEvent[], damages: Damage[]): ResponsesStreamEvent[] {
  const evs = [...events];
  for (const d of damages) {
    const at = d.at % (evs.length + 1);
    if (d.kind === "insert") evs.splice(at, 0, d.ev);
    else if (evs.length === 0) continue;
    else if (d.kind === "drop") evs.splice(at % evs.length, 1);
    else if (d.kind === "dup") evs.splice(at % evs.length, 0, evs[at % evs.length]);
    else if (evs.length > 1) {
      const i = at % (evs.length - 1);
      [evs[i], evs[i + 1]] = [evs[i + 1], evs[i]];
    }
  }
  return evs;
}

/** Event sequences of every kind: valid, damaged, followed by more events after the end, or pure junk. */
export const anyEvents: fc.Arbitrary<ResponsesStreamEvent[]> = fc.oneof(
  { weight: 2, arbitrary: streamSpec.map(eventsOf) },
  { weight: 4, arbitrary: fc.tuple(streamSpec, fc.array(damage, { minLength: 1, maxLength: 6 })).map(([s, d]) => applyDamage(eventsOf(s), d)) },
  {
    weight: 1,
    arbitrary: fc.tuple(streamSpec, streamSpec, fc.array(junkEvent, { maxLength: 3 })).map(([a, b, j]) => [...eventsOf(a), ...j, ...eventsOf(b)]),
  },
  { weight: 2, arbitrary: fc.array(junkEvent, { maxLength: 12 }) },
);
