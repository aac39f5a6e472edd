/**
 * What an upstream event means for failover (pure): until the first content, a failed attempt can be replaced by
 * another account's without the caller seeing anything, so the opening events are held; the first content commits
 * the call to its account. Content: a delta (text, refusal, reasoning, tool arguments), a finished item, an item
 * that starts with content in it, a terminal event with an answer; anything Gantry does not know as an opening event
 * commits too (holding what it cannot judge would only delay it).
 */
import type { UpstreamEvent } from "../../wire/stream-event";

/** Events that open the response or an empty part and say nothing yet. */
const OPENING: ReadonlySet<string> = new Set([
  "response.created",
  "response.in_progress",
  "response.queued",
  "response.content_part.added",
  "response.reasoning_summary_part.added",
]);

/** The most opening events, and bytes, held before the call commits to its account anyway. */
export const HOLD_MAX_EVENTS = 64;
export const HOLD_MAX_BYTES = 256 * 1024;

export type OpeningVerdict = "hold" | "commit" | { failed: { code: string | null; message: string } };

export function openingVerdict(e: UpstreamEvent): OpeningVerdict {
  switch (e.kind) {
    case "delta":
      return "commit";
    case "error":
      return { failed: { code: e.error.code, message: e.error.message } };
    case "terminal":
      return e.type === "response.failed" && e.error ? { failed: { code: e.error.code, message: e.error.message } } : "commit";
    default:
      if (OPENING.has(e.type)) return "hold";
      if (e.type === "response.output_item.added") return itemHasContent(e.ev.item) ? "commit" : "hold";
      return "commit";
  }
}

/** An item that arrives with something in it: text parts with text, tool arguments, a reasoning summary. */
function itemHasContent(item: unknown): boolean {
  if (item === null || typeof item !== "object") return false;
  const it = item as Record<string, unknown>;
  if (typeof it.arguments === "string" && it.arguments !== "") return true;
  if (typeof it.input === "string" && it.input !== "") return true;
  for (const list of [it.content, it.summary]) {
    if (Array.isArray(list) && list.some((p) => p && typeof p === "object" && ((typeof p.text === "string" && p.text !== "") || (typeof p.refusal === "string" && p.refusal !== "")))) return true;
  }
  return false;
}
