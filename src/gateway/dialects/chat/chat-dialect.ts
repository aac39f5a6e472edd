/**
 * The Chat Completions dialect (POST /v1/chat/completions): the messages are translated to a Responses request,
 * and the upstream's events go back as chat chunks, or collected into one chat.completion.
 */
import type { Dialect, DialectTurn } from "../../exchange/dialect";
import { chatToResponses } from "../../translate/chat-to-responses";
import { responsesToChat } from "../../translate/responses-to-chat";
import { ChatSink } from "./chat-sink";

function chatId(): string {
  return "chatcmpl-" + crypto.randomUUID().replaceAll("-", "").slice(0, 24);
}

function maxTokensOf(body: Record<string, unknown>): { value: number | null; param: string } {
  for (const param of ["max_completion_tokens", "max_tokens"]) {
    const v = body[param];
    if (typeof v === "number" && Number.isFinite(v)) return { value: v, param };
  }
  return { value: null, param: "max_tokens" };
}

export const chatDialect: Dialect = {
  endpoint: "chat.completions",
  itemsField: "messages",
  inputFrom: "chat",
  read({ body }, deps): DialectTurn {
    const translated = chatToResponses(body);
    const maxTokens = maxTokensOf(body);
    // The completion's id and time, made once the upstream answered (the reply's `created` is that moment).
    let context = { id: "", created: 0, model: "" };
    return {
      maxTokens: maxTokens.value,
      maxTokensParam: maxTokens.param,
      stream: translated.stream,
      prepare: async () => translated.request,
      upstreamAnswered(call) {
        context = { id: chatId(), created: Math.floor(deps.now() / 1000), model: call.model };
      },
      sink: (source, toolNames, call) => new ChatSink(source, toolNames, { ...context, includeUsage: translated.includeUsage }),
      reply: (response) => responsesToChat(response, context),
    };
  },
};
