/**
 * The Anthropic Messages dialect (POST /v1/messages): the request is translated to a Responses request, and the
 * upstream's events go back as Messages events, or collected into one `message`. The key comes in `x-api-key` (or as
 * a bearer token), errors go out in Anthropic's envelope, and every reply names its request id in `request-id` too.
 */
import type { Dialect, DialectTurn } from "../../exchange/dialect";
import { messagesToResponses } from "../../translate/messages/messages-to-responses";
import { responsesToMessages } from "../../translate/messages/responses-to-messages";
import { createStopWatch } from "../../translate/messages/stop-sequences";
import { tokensOfBytes } from "../../wire/token-counts";
import { messagesErrorReply } from "./messages-errors-reply";
import { MessagesSink } from "./messages-sink";

function messageId(): string {
  return "msg_" + crypto.randomUUID().replaceAll("-", "").slice(0, 24);
}

/** `x-api-key` as Anthropic's clients send it; a bearer token (ANTHROPIC_AUTH_TOKEN) when there is none. */
function credential(headers: Headers): string | null {
  const key = headers.get("x-api-key")?.trim();
  return key ? `Bearer ${key}` : headers.get("authorization");
}

export const messagesDialect: Dialect = {
  endpoint: "messages",
  itemsField: "messages",
  // The translation writes items in the upstream's shape already (text part types per role, no ids).
  inputFrom: "chat",
  credential,
  requestIdHeader: "request-id",
  errorReply: messagesErrorReply,
  read({ body, bytes }): DialectTurn {
    const t = messagesToResponses(body);
    const id = messageId();
    const options = { id, stopSequences: t.stopSequences, thinking: t.thinking };
    return {
      maxTokens: t.maxTokens,
      maxTokensParam: "max_tokens",
      stream: t.stream,
      prepare: async () => t.request,
      // The input's size until the upstream counts it (message_delta carries its count).
      // Anthropic's clients expect their own model name back, whatever alias served it.
      sink: (source, toolNames, call) => new MessagesSink(source, toolNames, { ...options, model: call.requestedModel, inputTokens: tokensOfBytes(bytes) }),
      // A stop sequence ends the collection too: the upstream is cut there, as a stream's is.
      collectCut: () => (t.stopSequences.length > 0 ? { reached: createStopWatch(t.stopSequences), code: "stop_sequence" } : undefined),
      reply: (response, call) => responsesToMessages(response, { ...options, model: call.requestedModel }),
    };
  },
};
