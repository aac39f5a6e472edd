import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createResponseCollector, type CollectedResponse } from "../../src/gateway/wire/collect";
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { runs } from "./arbitraries";
import { anyEvents, argsOf, eventsOf, junkEvent, streamSpec, textOfPart } from "./responses-stream-model";

function collect(events: ResponsesStreamEvent[]): CollectedResponse {
  const c = createResponseCollector();
  for (const ev of events) c.push(ev);
  void c.terminal;
  return c.result();
}

/** openai-node's rule, restated: the text of every output_text part of every message item, in output order. */
function outputTextOf(output: unknown[]): string {
  let text = "";
  for (const item of output) {
    if (item === null || typeof item !== "object" || (item as any).type !== "message" || !Array.isArray((item as any).content)) continue;
    for (const part of (item as any).content) {
      if (part !== null && typeof part === "object" && part.type === "output_text" && typeof part.text === "string") text += part.text;
    }
  }
  return text;
}

describe("collector: arbitrary event sequences", () => {
  test("never throws; the result is a response object whose output_text is the output's text parts in order", () => {
    fc.assert(
      fc.property(anyEvents, (events) => {
        const r = collect(events);
        expect(r.object).toBe("response");
        expect(typeof r.id).toBe("string");
        expect(typeof r.status).toBe("string");
        expect(Array.isArray(r.output)).toBe(true);
        expect(typeof r.output_text).toBe("string");
        expect(r.output_text).toBe(outputTextOf(r.output));
        JSON.stringify(r);
      }),
      runs(700),
    );
  });

  test("events after the terminal event change nothing", () => {
    fc.assert(
      fc.property(anyEvents, fc.array(junkEvent, { minLength: 1, maxLength: 4 }), (events, extra) => {
        const end = events.findIndex((ev) => ["response.completed", "response.incomplete", "response.failed"].includes(ev.type));
        if (end < 0) return;
        expect(collect([...events, ...extra])).toEqual(collect(events));
      }),
      runs(300),
    );
  });
});

describe("collector: valid streams", () => {
  test("the collected response holds exactly the streamed items, whether or not the terminal event repeats them", () => {
    fc.assert(
      fc.property(streamSpec, (spec) => {
        const r = collect(eventsOf(spec));
        const e = spec.ending;
        const status = e.kind === "completed" ? "completed" : e.kind === "incomplete" ? "incomplete" : e.kind === "none" ? "in_progress" : "failed";
        expect(r.status).toBe(status);
        // response.failed carries the upstream's own error object; an error event is turned into one.
        if (e.kind === "failed") expect(r.error).toEqual({ code: e.code, message: e.message });
        if (e.kind === "error") {
          expect(typeof r.error?.code).toBe("string");
          expect(r.error!.code).not.toBe("");
          if (e.code !== "") expect(r.error!.code).toBe(e.code);
        }
        // A failed stream's terminal output is empty; every other item arrived whole in output_item.done.
        expect(r.output.map((it: any) => it.type)).toEqual(spec.items.map((it) => it.kind));
        const text = spec.items.flatMap((it) => (it.kind === "message" ? it.parts.filter((p) => p.kind === "output_text").map(textOfPart) : [])).join("");
        expect(r.output_text).toBe(text);
        spec.items.forEach((it, i) => {
          if (it.kind === "function_call") expect(r.output[i]).toMatchObject({ call_id: it.callId, name: it.name, arguments: argsOf(it) });
        });
        if (status !== "in_progress" && status !== "failed") expect(r.usage).toEqual(spec.usage);
      }),
      runs(500),
    );
  });

  test("the order in which items arrive does not matter: output follows output_index", () => {
    fc.assert(
      fc.property(
        streamSpec.chain((spec) => fc.tuple(fc.constant(spec), fc.shuffledSubarray(spec.items.map((_, i) => i), { minLength: spec.items.length }))),
        ([spec, order]) => {
          expect(collect(eventsOf(spec, order))).toEqual(collect(eventsOf(spec)));
        },
      ),
      runs(300),
    );
  });

  test("a stream cut off anywhere still yields the text that had arrived, marked incomplete", () => {
    fc.assert(
      fc.property(streamSpec, fc.nat(), (spec, cut) => {
        const events = eventsOf(spec);
        const at = cut % (events.length + 1);
        const r = collect(events.slice(0, at));
        // The text that had streamed for each output_text part: its .done text if it came, else its deltas.
        let want = "";
        const texts = new Map<string, string>();
        const order: string[] = [];
        for (const ev of events.slice(0, at)) {
          const key = `${ev.output_index}:${ev.content_index}`;
          if (ev.type === "response.output_text.delta" || ev.type === "response.output_text.done") {
            if (!texts.has(key)) order.push(key);
            texts.set(key, ev.type === "response.output_text.done" ? ev.text : (texts.get(key) ?? "") + ev.delta);
          }
          if (ev.type === "response.output_item.done" && ev.item.type === "message") {
            ev.item.content.forEach((p: any, j: number) => {
              const k = `${ev.output_index}:${j}`;
              if (p.type !== "output_text") return;
              if (!texts.has(k)) order.push(k);
              texts.set(k, p.text);
            });
          }
        }
        if (["response.completed", "response.incomplete", "response.failed"].includes(events[at - 1]?.type)) return;
        order.sort((a, b) => Number(a.split(":")[0]) - Number(b.split(":")[0]) || Number(a.split(":")[1]) - Number(b.split(":")[1]));
        for (const k of order) want += texts.get(k);
        expect(r.output_text).toBe(want);
        for (const it of r.output as any[]) if (!events.slice(0, at).some((ev) => ev.type === "response.output_item.done" && ev.item.id === it.id)) expect(it.status).toBe("incomplete");
      }),
      runs(400),
    );
  });
});
