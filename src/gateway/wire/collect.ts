/**
 * Folds a Responses event stream into the final response object, for callers that asked for `stream:false`
 * (the upstream always streams). The terminal event's `response.output` can be empty, so the output is
 * accumulated from the item events and deltas as they pass.
 */

import { streamErrorOf, type StreamError } from "./upstream-events";
import {
  TERMINAL_EVENT_TYPES,
  type JsonObject,
  type OutputItem,
  type ResponseObject,
  type ResponsesStreamEvent,
  type ResponsesUsage,
} from "./responses-types";

export type CollectedResponse = ResponseObject & { output_text: string };

export interface ResponseCollector {
  push(ev: ResponsesStreamEvent): void;
  /** The first response.completed / .incomplete / .failed seen; null while the stream is unfinished. */
  readonly terminal: ResponsesStreamEvent | null;
  result(): CollectedResponse;
  /** The item at an output index as accumulated so far (status `incomplete` unless its `.done` arrived), or null. */
  item(index: number): OutputItem | null;
}

/** Text of one content part (or summary part) as it streams: the `.done` text wins over the joined deltas. */
interface TextAcc {
  part?: JsonObject;
  partDone: boolean;
  deltas: string[];
  text?: string;
  /** Set by refusal events: the text belongs in `refusal`, not `text`. */
  refusal: boolean;
}

interface ItemAcc {
  index: number;
  added?: OutputItem;
  done?: OutputItem;
  /** Item type implied by the deltas, for an item whose `.added` never arrived. */
  impliedType?: string;
  itemId?: string;
  content: Map<number, TextAcc>;
  summary: Map<number, TextAcc>;
  args: string[];
  argsDone?: string;
}

export function createResponseCollector(): ResponseCollector {
  const items = new Map<number, ItemAcc>();
  const indexOfItemId = new Map<string, number>();
  let start: JsonObject | null = null;
  let terminal: ResponsesStreamEvent | null = null;
  let streamError: StreamError | null = null;

  function itemAt(index: number, itemId: unknown): ItemAcc {
    let acc = items.get(index);
    if (!acc) {
      acc = { index, content: new Map(), summary: new Map(), args: [] };
      items.set(index, acc);
    }
    if (typeof itemId === "string" && itemId !== "") {
      acc.itemId ??= itemId;
      indexOfItemId.set(itemId, index);
    }
    return acc;
  }

  // Delta events carry both output_index and item_id; fall back to the id if an upstream drops the index.
  function itemOf(ev: ResponsesStreamEvent, impliedType: string): ItemAcc | null {
    let index: number | undefined;
    if (typeof ev.output_index === "number") index = ev.output_index;
    else if (typeof ev.item_id === "string") index = indexOfItemId.get(ev.item_id);
    if (index === undefined) return null;
    const acc = itemAt(index, ev.item_id);
    acc.impliedType ??= impliedType;
    return acc;
  }

  function textAt(map: Map<number, TextAcc>, ev: ResponsesStreamEvent, key: "content_index" | "summary_index"): TextAcc {
    const i = typeof ev[key] === "number" ? (ev[key] as number) : 0;
    let acc = map.get(i);
    if (!acc) {
      acc = { partDone: false, deltas: [], refusal: false };
      map.set(i, acc);
    }
    return acc;
  }

  function onText(ev: ResponsesStreamEvent, impliedType: string, where: "content" | "summary", phase: "delta" | "done", field: string): void {
    const item = itemOf(ev, impliedType);
    if (!item) return;
    const acc = textAt(item[where], ev, where === "content" ? "content_index" : "summary_index");
    if (field === "refusal") acc.refusal = true;
    if (phase === "delta") {
      if (typeof ev.delta === "string") acc.deltas.push(ev.delta);
    } else if (typeof ev[field] === "string") {
      acc.text = ev[field];
    }
  }

  function onPart(ev: ResponsesStreamEvent, impliedType: string, where: "content" | "summary", done: boolean): void {
    const item = itemOf(ev, impliedType);
    if (!item || ev.part == null || typeof ev.part !== "object") return;
    const acc = textAt(item[where], ev, where === "content" ? "content_index" : "summary_index");
    if (!acc.partDone) acc.part = ev.part;
    if (done) acc.partDone = true;
  }

  function push(ev: ResponsesStreamEvent): void {
    // Anything after the terminal event is not part of this response.
    if (terminal) return;
    switch (ev.type) {
      case "response.created":
      case "response.in_progress":
        if (isObject(ev.response)) start = ev.response;
        return;
      case "response.output_item.added":
      case "response.output_item.done": {
        if (!isObject(ev.item)) return;
        const index = typeof ev.output_index === "number" ? ev.output_index : nextFreeIndex(items);
        const acc = itemAt(index, ev.item.id);
        if (ev.type === "response.output_item.added") acc.added = ev.item as OutputItem;
        else acc.done = ev.item as OutputItem;
        return;
      }
      case "response.content_part.added":
        return onPart(ev, "message", "content", false);
      case "response.content_part.done":
        return onPart(ev, "message", "content", true);
      case "response.output_text.delta":
        return onText(ev, "message", "content", "delta", "text");
      case "response.output_text.done":
        return onText(ev, "message", "content", "done", "text");
      case "response.refusal.delta":
        return onText(ev, "message", "content", "delta", "refusal");
      case "response.refusal.done":
        return onText(ev, "message", "content", "done", "refusal");
      case "response.reasoning_summary_part.added":
        return onPart(ev, "reasoning", "summary", false);
      case "response.reasoning_summary_part.done":
        return onPart(ev, "reasoning", "summary", true);
      case "response.reasoning_summary_text.delta":
        return onText(ev, "reasoning", "summary", "delta", "text");
      case "response.reasoning_summary_text.done":
        return onText(ev, "reasoning", "summary", "done", "text");
      case "response.reasoning_text.delta":
        return onText(ev, "reasoning", "content", "delta", "text");
      case "response.reasoning_text.done":
        return onText(ev, "reasoning", "content", "done", "text");
      case "response.function_call_arguments.delta": {
        const item = itemOf(ev, "function_call");
        if (item && typeof ev.delta === "string") item.args.push(ev.delta);
        return;
      }
      case "response.function_call_arguments.done": {
        const item = itemOf(ev, "function_call");
        if (item && typeof ev.arguments === "string") item.argsDone = ev.arguments;
        return;
      }
      case "error":
        streamError ??= streamErrorOf(ev);
        return;
      default:
        if (TERMINAL_EVENT_TYPES.has(ev.type)) terminal = ev;
    }
  }

  function result(): CollectedResponse {
    const built = [...items.values()].sort((a, b) => a.index - b.index).map(buildItem);
    const finalResponse = terminal && isObject(terminal.response) ? terminal.response : null;
    const final: JsonObject = { ...start, ...finalResponse };

    const output = chooseOutput(built, finalResponse?.output);

    let status: string = typeof final.status === "string" ? final.status : "in_progress";
    let error = final.error ?? null;
    if (streamError && error === null) {
      // An error event with no response.failed after it still means the response failed.
      if (!terminal || status === "failed") {
        status = "failed";
        error = { code: streamError.code, message: streamError.message };
      }
    }

    return {
      ...final,
      id: typeof final.id === "string" ? final.id : "",
      object: "response",
      created_at: typeof final.created_at === "number" ? final.created_at : 0,
      status,
      error,
      incomplete_details: final.incomplete_details ?? null,
      model: typeof final.model === "string" ? final.model : "",
      output,
      usage: final.usage ?? null,
      output_text: outputText(output),
    };
  }

  return {
    push,
    get terminal() {
      return terminal;
    },
    result,
    item: (index) => {
      const acc = items.get(index);
      return acc ? buildItem(acc) : null;
    },
  };
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function nextFreeIndex(items: Map<number, ItemAcc>): number {
  let max = -1;
  for (const i of items.keys()) if (i > max) max = i;
  return max + 1;
}

/** An item that got `.done` is final; any other is rebuilt from `.added` plus its deltas. */
function buildItem(acc: ItemAcc): OutputItem {
  if (acc.done) return acc.done;

  const item: JsonObject = acc.added ? { ...acc.added } : synthesize(acc);
  // It never finished, whatever `.added` said.
  item.status = "incomplete";

  if (item.type === "function_call") {
    item.arguments = acc.argsDone ?? (acc.args.length > 0 ? acc.args.join("") : (item.arguments ?? ""));
  }
  if (acc.content.size > 0) {
    const fallback = item.type === "reasoning" ? "reasoning_text" : "output_text";
    item.content = mergeParts(item.content, acc.content, fallback);
  }
  if (acc.summary.size > 0) {
    item.summary = mergeParts(item.summary, acc.summary, "summary_text");
  }
  return item as OutputItem;
}

function synthesize(acc: ItemAcc): JsonObject {
  const type = acc.impliedType ?? "message";
  const id = acc.itemId !== undefined ? { id: acc.itemId } : {};
  if (type === "function_call") return { ...id, type, call_id: "", name: "", arguments: "" };
  if (type === "reasoning") return { ...id, type, summary: [] };
  return { ...id, type: "message", role: "assistant", content: [] };
}

function mergeParts(existing: unknown, accs: Map<number, TextAcc>, fallbackType: string): JsonObject[] {
  const parts: (JsonObject | undefined)[] = Array.isArray(existing) ? [...existing] : [];
  for (const [i, acc] of accs) {
    if (acc.partDone && acc.part) {
      parts[i] = acc.part;
      continue;
    }
    const streamed = acc.text ?? acc.deltas.join("");
    const part: JsonObject = acc.part ? { ...acc.part } : { type: fallbackType };
    if (acc.refusal) {
      part.type = "refusal";
      delete part.text;
      part.refusal = streamed;
    } else {
      if (part.type === "output_text") part.annotations ??= [];
      part.text = streamed;
    }
    parts[i] = part;
  }
  // Holes mean a part index that never arrived; they are not parts.
  return parts.filter((p): p is JsonObject => p !== undefined);
}

/**
 * The terminal output is the upstream's own final word and carries fields deltas never do, so it wins unless
 * what we accumulated is more complete: more items, or as many items with more text in them.
 */
function chooseOutput(accumulated: OutputItem[], terminalOutput: unknown): OutputItem[] {
  if (!Array.isArray(terminalOutput) || terminalOutput.length === 0) return accumulated;
  if (accumulated.length > terminalOutput.length) return accumulated;
  if (accumulated.length === terminalOutput.length && payloadSize(accumulated) > payloadSize(terminalOutput)) {
    return accumulated;
  }
  return terminalOutput as OutputItem[];
}

const PAYLOAD_FIELDS = ["text", "refusal", "arguments", "encrypted_content"] as const;

function payloadSize(items: unknown[]): number {
  let size = 0;
  const add = (o: unknown) => {
    if (!isObject(o)) return;
    for (const f of PAYLOAD_FIELDS) if (typeof o[f] === "string") size += o[f].length;
  };
  for (const item of items) {
    add(item);
    if (!isObject(item)) continue;
    if (Array.isArray(item.content)) item.content.forEach(add);
    if (Array.isArray(item.summary)) item.summary.forEach(add);
  }
  return size;
}

/** Same rule as openai-node's `addOutputText`: every output_text part of every message item, joined with "". */
function outputText(output: OutputItem[]): string {
  const texts: string[] = [];
  for (const item of output) {
    // The terminal output is the upstream's JSON and may hold anything: a null item, or a text that is no string.
    if (!isObject(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content as JsonObject[]) {
      if (part?.type === "output_text" && typeof part.text === "string") texts.push(part.text);
    }
  }
  return texts.join("");
}

