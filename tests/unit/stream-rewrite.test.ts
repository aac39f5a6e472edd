import { describe, expect, test } from "bun:test";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { createResponsesStreamRewriter } from "../../src/gateway/wire/stream-rewrite";
import { rewriteSkipping } from "../support/rewrite-skipping";

const TOOLS = new Set(["get_weather", "search"]);
const MARKUP = '<tool_use>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_use>';
const PARIS = '{"city":"Paris"}';

type Item = { kind: "message"; deltas: string[]; id?: string } | { kind: "reasoning" } | { kind: "call"; name: string; args: string };

/**
 * An upstream stream in the shape of the captured OpenAI ones: created, in_progress, each item's events in
 * order, then the terminal event whose output lists the items (or is empty, as some upstreams send it).
 */
function upstream(items: Item[], opts: { status?: string; emptyOutput?: boolean; terminal?: string } = {}): ResponsesStreamEvent[] {
  const events: ResponsesStreamEvent[] = [];
  const response = (status: string, output: unknown[]) => ({ id: "resp_1", object: "response", created_at: 1, status, error: null, incomplete_details: null, model: "m", output, usage: null });
  events.push({ type: "response.created", response: response("in_progress", []) });
  events.push({ type: "response.in_progress", response: response("in_progress", []) });
  const output: unknown[] = [];
  items.forEach((it, i) => {
    if (it.kind === "reasoning") {
      const item = { id: `rs_${i}`, type: "reasoning", summary: [] };
      events.push({ type: "response.output_item.added", output_index: i, item });
      events.push({ type: "response.output_item.done", output_index: i, item });
      output.push(item);
    } else if (it.kind === "call") {
      const base = { id: `fc_up${i}`, type: "function_call", call_id: `call_up${i}`, name: it.name };
      events.push({ type: "response.output_item.added", output_index: i, item: { ...base, status: "in_progress", arguments: "" } });
      events.push({ type: "response.function_call_arguments.delta", item_id: base.id, output_index: i, delta: it.args });
      events.push({ type: "response.function_call_arguments.done", item_id: base.id, output_index: i, arguments: it.args });
      const done = { ...base, status: "completed", arguments: it.args };
      events.push({ type: "response.output_item.done", output_index: i, item: done });
      output.push(done);
    } else {
      const id = it.id ?? `msg_${i}`;
      const full = it.deltas.join("");
      const part = (text: string) => ({ type: "output_text", annotations: [], text });
      events.push({ type: "response.output_item.added", output_index: i, item: { id, type: "message", status: "in_progress", role: "assistant", content: [] } });
      events.push({ type: "response.content_part.added", item_id: id, output_index: i, content_index: 0, part: part("") });
      for (const d of it.deltas) events.push({ type: "response.output_text.delta", item_id: id, output_index: i, content_index: 0, delta: d });
      events.push({ type: "response.output_text.done", item_id: id, output_index: i, content_index: 0, text: full });
      events.push({ type: "response.content_part.done", item_id: id, output_index: i, content_index: 0, part: part(full) });
      const done = { id, type: "message", status: "completed", role: "assistant", content: [part(full)] };
      events.push({ type: "response.output_item.done", output_index: i, item: done });
      output.push(done);
    }
  });
  const status = opts.status ?? "completed";
  events.push({ type: opts.terminal ?? "response.completed", response: response(status, opts.emptyOutput ? [] : output) });
  events.forEach((ev, n) => (ev.sequence_number = n));
  return events;
}

function counter(): () => string {
  let n = 0;
  return () => `t${++n}`;
}

function rewrite(events: ResponsesStreamEvent[], tools: ReadonlySet<string> = TOOLS) {
  const rw = createResponsesStreamRewriter({ toolNames: tools, makeId: counter() });
  const out: ResponsesStreamEvent[] = [];
  const sameRef: boolean[] = [];
  for (const ev of events) {
    const got = rw.push(ev);
    sameRef.push(got.length === 1 && got[0] === ev);
    out.push(...got);
  }
  out.push(...rw.finish());
  // The pipeline's way gives the same stream: deltas the rewriter skips go out as their own text, unparsed.
  expect(rewriteSkipping(events, createResponsesStreamRewriter({ toolNames: tools, makeId: counter() }))).toEqual(out);
  return { out, sameRef };
}

const deltasOf = (out: ResponsesStreamEvent[], index: number) =>
  out.filter((e) => e.type === "response.output_text.delta" && e.output_index === index).map((e) => e.delta as string);
const terminalOf = (out: ResponsesStreamEvent[]) => out[out.length - 1];
const ofType = (out: ResponsesStreamEvent[], type: string) => out.filter((e) => e.type === type);

function expectSequential(out: ResponsesStreamEvent[]): void {
  expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, n) => n));
}

/** The four events of a recovered call, as the rewriter must emit them. */
function recoveredCall(index: number, id: string, name: string, args: string) {
  const base = { id: `fc_${id}`, type: "function_call", call_id: `call_${id}`, name };
  return [
    { type: "response.output_item.added", output_index: index, item: { ...base, status: "in_progress", arguments: "" } },
    { type: "response.function_call_arguments.delta", item_id: base.id, output_index: index, delta: args },
    { type: "response.function_call_arguments.done", item_id: base.id, output_index: index, arguments: args },
    { type: "response.output_item.done", output_index: index, item: { ...base, status: "completed", arguments: args } },
  ];
}

const strip = (evs: ResponsesStreamEvent[]) => evs.map(({ sequence_number: _s, ...rest }) => rest);

describe("untouched streams", () => {
  test("plain text passes through as the very same event objects", () => {
    const events = upstream([{ kind: "reasoning" }, { kind: "message", deltas: ["Hello", ", wor", "ld. 1 < 2 and <b>x</b>"] }]);
    const { out, sameRef } = rewrite(events);
    expect(sameRef.every(Boolean)).toBe(true);
    expect(out).toHaveLength(events.length);
    out.forEach((ev, n) => expect(ev).toBe(events[n]));
  });

  test("reasoning text parts are not cleaned, even when they mention markup", () => {
    const ev: ResponsesStreamEvent = {
      type: "response.content_part.done",
      sequence_number: 0,
      item_id: "rs_0",
      output_index: 0,
      content_index: 0,
      part: { type: "reasoning_text", text: `I could write ${MARKUP}` },
    };
    const rw = createResponsesStreamRewriter({ toolNames: TOOLS });
    expect(rw.push(ev)[0]).toBe(ev);
    expect(rw.finish()).toEqual([]);
  });

  test("a real function_call item from upstream is left alone", () => {
    const events = upstream([{ kind: "message", deltas: ["ok"] }, { kind: "call", name: "search", args: '{"q":"a"}' }]);
    const { sameRef } = rewrite(events);
    expect(sameRef.every(Boolean)).toBe(true);
  });

  test("a tag mentioned in prose comes out whole, with consistent done texts", () => {
    const events = upstream([{ kind: "message", deltas: ["Wrap it in a <tool", "_call> tag."] }]);
    const { out } = rewrite(events);
    expect(deltasOf(out, 0).join("")).toBe("Wrap it in a <tool_call> tag.");
    expect(ofType(out, "response.output_text.done")[0].text).toBe("Wrap it in a <tool_call> tag.");
    expect(ofType(out, "response.output_item.added")).toHaveLength(1);
    expectSequential(out);
  });
});

describe("markup in the text", () => {
  const split = ["Let me check. <tool", '_use>{"name":"get_weather",', '"arguments":{"city":"Paris"}}</tool_', "use> Done."];

  test("split across deltas: cleaned deltas, a function_call item after the message, renumbered sequence", () => {
    const events = upstream([{ kind: "message", deltas: split }]);
    const { out, sameRef } = rewrite(events);

    // Events before the first delta that needed the cleaner pass by reference.
    expect(sameRef.slice(0, 5)).toEqual([true, true, true, true, false]);
    expect(deltasOf(out, 0).join("")).toBe("Let me check.  Done.");
    expect(ofType(out, "response.output_text.done")[0].text).toBe("Let me check.  Done.");
    expect(ofType(out, "response.content_part.done")[0].part.text).toBe("Let me check.  Done.");

    const doneEvents = ofType(out, "response.output_item.done");
    expect(doneEvents[0].item.content[0].text).toBe("Let me check.  Done.");
    expect(doneEvents[0].output_index).toBe(0);

    const messageDoneAt = out.indexOf(doneEvents[0]);
    expect(strip(out.slice(messageDoneAt + 1, messageDoneAt + 5))).toEqual(recoveredCall(1, "t1", "get_weather", PARIS));
    expect(terminalOf(out).type).toBe("response.completed");
    expectSequential(out);
  });

  test("the terminal response lists the cleaned message, then the recovered call", () => {
    const { out } = rewrite(upstream([{ kind: "message", deltas: split }]));
    const response = terminalOf(out).response;
    expect(response.status).toBe("completed");
    expect(response.output).toHaveLength(2);
    expect(response.output[0].content[0].text).toBe("Let me check.  Done.");
    expect(response.output[1]).toEqual({ id: "fc_t1", type: "function_call", call_id: "call_t1", name: "get_weather", status: "completed", arguments: PARIS });
  });

  test("the upstream events are not mutated", () => {
    const events = upstream([{ kind: "message", deltas: split }]);
    const before = JSON.stringify(events);
    rewrite(events);
    expect(JSON.stringify(events)).toBe(before);
  });

  test("every split of the markup into two deltas gives the same events", () => {
    const text = `A ${MARKUP} B`;
    const reference = strip(rewrite(upstream([{ kind: "message", deltas: [text] }])).out);
    for (let i = 1; i < text.length; i++) {
      const { out } = rewrite(upstream([{ kind: "message", deltas: [text.slice(0, i), text.slice(i)] }]));
      expectSequential(out);
      // The delta events themselves differ in how the text is cut; everything else must match exactly.
      const rest = strip(out.filter((e) => e.type !== "response.output_text.delta"));
      expect(rest).toEqual(reference.filter((e) => e.type !== "response.output_text.delta"));
      expect(deltasOf(out, 0).join("")).toBe("A  B");
    }
  });

  test("a delta that is all markup is dropped, not sent empty", () => {
    const { out } = rewrite(upstream([{ kind: "message", deltas: ["Hi ", MARKUP, " there"] }]));
    expect(deltasOf(out, 0)).toEqual(["Hi ", " there"]);
  });

  test("a reasoning item before the message and a real call after it: indexes shift past the injected call", () => {
    const events = upstream([
      { kind: "reasoning" },
      { kind: "message", deltas: ["Checking ", MARKUP] },
      { kind: "call", name: "search", args: '{"q":"a"}' },
    ]);
    const { out } = rewrite(events);
    expectSequential(out);

    const added = ofType(out, "response.output_item.added").map((e) => [e.output_index, e.item.type, e.item.id]);
    expect(added).toEqual([
      [0, "reasoning", "rs_0"],
      [1, "message", "msg_1"],
      [2, "function_call", "fc_t1"],
      [3, "function_call", "fc_up2"],
    ]);
    // Every event of the upstream call follows it to index 3.
    expect(out.filter((e) => e.item_id === "fc_up2" || e.item?.id === "fc_up2").map((e) => e.output_index)).toEqual([3, 3, 3, 3]);
    expect(terminalOf(out).response.output.map((o: { id: string }) => o.id)).toEqual(["rs_0", "msg_1", "fc_t1", "fc_up2"]);
  });

  test("two messages each with markup: each call follows its own message, later items shift by both", () => {
    const events = upstream([
      { kind: "message", deltas: [MARKUP] },
      { kind: "message", deltas: ['<tool_call>{"name":"search","arguments":{"q":"b"}}</tool_call>', "<tool_call>", '{"name":"search","arguments":{"q":"c"}}</tool_call>'] },
      { kind: "reasoning" },
    ]);
    const { out } = rewrite(events);
    expectSequential(out);
    const added = ofType(out, "response.output_item.added").map((e) => `${e.output_index}:${e.item.id}`);
    expect(added).toEqual(["0:msg_0", "1:fc_t1", "2:msg_1", "3:fc_t2", "4:fc_t3", "5:rs_2"]);
    const msg1Deltas = out.filter((e) => e.item_id === "msg_1").map((e) => e.output_index);
    expect(new Set(msg1Deltas)).toEqual(new Set([2]));
    expect(terminalOf(out).response.output.map((o: { id: string }) => o.id)).toEqual(["msg_0", "fc_t1", "msg_1", "fc_t2", "fc_t3", "rs_2"]);
    expect(ofType(out, "response.function_call_arguments.done").map((e) => e.arguments)).toEqual([PARIS, '{"q":"b"}', '{"q":"c"}']);
  });

  test("markup naming a tool not offered is removed and no call appears", () => {
    const { out } = rewrite(upstream([{ kind: "message", deltas: ["a", MARKUP, "b"] }]), new Set(["search"]));
    expect(deltasOf(out, 0).join("")).toBe("ab");
    expect(ofType(out, "response.output_item.added")).toHaveLength(1);
    expect(terminalOf(out).response.output).toHaveLength(1);
    expect(terminalOf(out).response.output[0].content[0].text).toBe("ab");
    expectSequential(out);
  });

  test("an empty terminal output is rebuilt from the items so the call and the message both show", () => {
    const { out } = rewrite(upstream([{ kind: "reasoning" }, { kind: "message", deltas: ["x", MARKUP] }], { emptyOutput: true }));
    const output = terminalOf(out).response.output;
    expect(output.map((o: { type: string }) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(output[1].content[0].text).toBe("x");
  });

  test("an empty terminal output is filled from the items even when nothing else changed", () => {
    const events = upstream([{ kind: "reasoning" }, { kind: "message", deltas: ["plain ", "text"] }], { emptyOutput: true });
    const { out, sameRef } = rewrite(events);
    // Everything but the terminal event passes untouched, with upstream's numbering.
    expect(sameRef.slice(0, -1).every(Boolean)).toBe(true);
    expect(sameRef.at(-1)).toBe(false);
    expectSequential(out);
    const output = terminalOf(out).response.output;
    expect(output.map((o: { type: string }) => o.type)).toEqual(["reasoning", "message"]);
    expect(output[1].content[0].text).toBe("plain text");
    // A stream that had no items keeps its empty output, by reference.
    const bare = upstream([], { emptyOutput: true });
    expect(rewrite(bare).sameRef.every(Boolean)).toBe(true);
  });

  test("an incomplete response keeps its status and still lists the recovered call", () => {
    const { out } = rewrite(upstream([{ kind: "message", deltas: [MARKUP] }], { status: "incomplete", terminal: "response.incomplete" }));
    const t = terminalOf(out);
    expect(t.type).toBe("response.incomplete");
    expect(t.response.status).toBe("incomplete");
    expect(t.response.output.map((o: { type: string }) => o.type)).toEqual(["message", "function_call"]);
  });
});

describe("text held at the end", () => {
  test("an unclosed block is released as a delta before output_text.done, and done texts keep it", () => {
    const deltas = ["Note: <tool_use>", '{"name":"get_weather"'];
    const { out } = rewrite(upstream([{ kind: "message", deltas }]));
    const full = deltas.join("");
    expect(deltasOf(out, 0)).toEqual(["Note: ", '<tool_use>{"name":"get_weather"']);
    const doneAt = out.findIndex((e) => e.type === "response.output_text.done");
    expect(out[doneAt - 1].type).toBe("response.output_text.delta");
    expect(out[doneAt].text).toBe(full);
    expect(terminalOf(out).response.output[0].content[0].text).toBe(full);
    expectSequential(out);
  });

  test("a stream cut off mid-block gets the withheld text from finish()", () => {
    const events = upstream([{ kind: "message", deltas: ["ok <tool_use>", "{"] }]);
    const cut = events.slice(0, events.findIndex((e) => e.type === "response.output_text.done"));
    const rw = createResponsesStreamRewriter({ toolNames: TOOLS, makeId: counter() });
    const out = cut.flatMap((e) => rw.push(e));
    const tail = rw.finish();
    expect(tail).toHaveLength(1);
    expect(tail[0]).toMatchObject({ type: "response.output_text.delta", item_id: "msg_0", output_index: 0, content_index: 0, delta: "<tool_use>{" });
    expectSequential([...out, ...tail]);
    expect(rw.finish()).toEqual([]);
  });
});

describe("upstream without deltas", () => {
  test("a message that arrives only in its done events is cleaned and its call recovered", () => {
    const events = upstream([{ kind: "message", deltas: [`a ${MARKUP} b`] }]).filter((e) => e.type !== "response.output_text.delta");
    events.forEach((ev, n) => (ev.sequence_number = n));
    const { out } = rewrite(events);
    expect(ofType(out, "response.output_text.done")[0].text).toBe("a  b");
    expect(ofType(out, "response.output_item.done")[0].item.content[0].text).toBe("a  b");
    expect(ofType(out, "response.output_item.added").map((e) => e.item.type)).toEqual(["message", "function_call"]);
    expect(ofType(out, "response.function_call_arguments.done")).toHaveLength(1);
    expectSequential(out);
  });
});

describe("ids", () => {
  test("idPrefix goes after fc_ / call_", () => {
    const rw = createResponsesStreamRewriter({ toolNames: TOOLS, idPrefix: "gx_", makeId: () => "7" });
    const out = upstream([{ kind: "message", deltas: [MARKUP] }]).flatMap((e) => rw.push(e));
    const item = ofType(out, "response.output_item.added")[1].item;
    expect([item.id, item.call_id]).toEqual(["fc_gx_7", "call_gx_7"]);
  });

  test("default ids are unique", () => {
    const rw = createResponsesStreamRewriter({ toolNames: TOOLS });
    const out = upstream([{ kind: "message", deltas: [MARKUP, MARKUP] }]).flatMap((e) => rw.push(e));
    const ids = ofType(out, "response.output_item.added").slice(1).map((e) => e.item.call_id);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^call_\w+$/);
    expect(ids[0]).not.toBe(ids[1]);
  });
});
