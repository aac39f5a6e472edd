/**
 * A finished Responses object -> one Anthropic `message` (pure). The response is the one collected from the upstream's
 * stream (collect.ts), so the same items the stream translation reads are read here, in the same order: reasoning as
 * thinking (when asked for), message text as text blocks, function calls as tool_use blocks; a stop sequence cuts the
 * text and drops what follows it.
 */
import { requireFinished } from "../require-finished";
import type { ResponseObject } from "../../wire/responses-types";
import type { MessagesContentBlock, MessagesMessage } from "./messages-types";
import { StopSequenceCutter } from "./stop-sequences";
import { stopReasonOf, usageToMessages } from "./stream-to-messages";
import { signatureOf } from "./thinking-signature";

export interface MessagesReplyOptions {
  id: string;
  model: string;
  stopSequences: readonly string[];
  thinking: boolean;
}

export function responsesToMessages(response: ResponseObject, opts: MessagesReplyOptions): MessagesMessage {
  requireFinished(response);
  const content: MessagesContentBlock[] = [];
  let stopped: string | null = null;
  let sawToolUse = false;
  for (const raw of Array.isArray(response.output) ? response.output : []) {
    if (stopped !== null) break;
    const item = raw as Record<string, any> | null;
    if (item === null || typeof item !== "object") continue;
    if (item.type === "reasoning" && opts.thinking) {
      const block = thinkingBlock(item);
      if (block) content.push(block);
    } else if (item.type === "message") {
      for (const part of Array.isArray(item.content) ? item.content : []) {
        const text = part?.type === "output_text" ? part.text : part?.type === "refusal" ? part.refusal : null;
        if (typeof text !== "string" || text === "") continue;
        const cutter = new StopSequenceCutter(opts.stopSequences);
        const cut = cutter.push(text);
        const kept = cut.stopped !== null ? cut.text : cut.text + cutter.flush();
        if (kept !== "") content.push({ type: "text", text: kept });
        if (cut.stopped !== null) {
          stopped = cut.stopped;
          break;
        }
      }
    } else if (item.type === "function_call") {
      sawToolUse = true;
      content.push({ type: "tool_use", id: String(item.call_id ?? item.id ?? ""), name: String(item.name ?? ""), input: parseArguments(item.arguments) });
    }
  }
  return {
    id: opts.id,
    type: "message",
    role: "assistant",
    model: opts.model,
    content,
    stop_reason: stopReasonOf(response.status, response.incomplete_details?.reason, stopped, sawToolUse),
    stop_sequence: stopped,
    usage: usageToMessages(response.usage),
  };
}

function thinkingBlock(item: Record<string, any>): MessagesContentBlock | null {
  const encrypted = typeof item.encrypted_content === "string" && item.encrypted_content !== "" ? item.encrypted_content : null;
  const summary = (Array.isArray(item.summary) ? item.summary : []).map((p: any) => (typeof p?.text === "string" ? p.text : "")).filter((t: string) => t !== "");
  if (summary.length > 0) return { type: "thinking", thinking: summary.join("\n\n"), signature: encrypted ? signatureOf(encrypted) : "" };
  return encrypted ? { type: "redacted_thinking", data: signatureOf(encrypted) } : null;
}

/** A call's arguments as the object Anthropic's `input` is; arguments that do not parse (a cut call) are an empty object. */
function parseArguments(args: unknown): unknown {
  if (typeof args !== "string" || args.trim() === "") return {};
  try {
    const parsed = JSON.parse(args);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
