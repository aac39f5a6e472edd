/**
 * A Responses event stream run through the tool-markup rewriter the way the stream pipeline does it: each event
 * arrives as an SSE frame, is classified, and an unread event the rewriter skips goes out as its own text. Tests
 * compare it with pushing every parsed event.
 */
import type { ResponsesStreamEvent } from "../../src/gateway/wire/responses-types";
import { classify, isUnread } from "../../src/gateway/wire/stream-event";
import type { ResponsesStreamRewriter } from "../../src/gateway/wire/stream-rewrite";

export function rewriteSkipping(events: ResponsesStreamEvent[], rw: ResponsesStreamRewriter): ResponsesStreamEvent[] {
  const out: ResponsesStreamEvent[] = [];
  for (const ev of events) {
    const e = classify({ event: ev.type, data: JSON.stringify(ev) });
    if (e === "done") continue;
    if (isUnread(e) && rw.skips(e)) out.push(JSON.parse(e.data));
    else out.push(...rw.push(e.ev, e.data));
  }
  out.push(...rw.finish());
  return out;
}
