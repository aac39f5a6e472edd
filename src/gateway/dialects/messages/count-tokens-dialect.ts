/**
 * `POST /v1/messages/count_tokens`: the Messages request translated as a conversation would be, normalised as it
 * would go upstream, and its input tokens counted with the upstream family's tokenizer (translate/input-tokens.ts,
 * upstream/tokenizers.ts). Gantry answers by itself: no upstream call and no ledger row (it spends no tokens).
 * It is admitted like a conversation of the key — its model permission (the name the caller sent), its RPM and
 * RPD, a concurrency slot while it counts — because counting costs this process's CPU: unmetered, a key could
 * spend it without limit.
 */
import type { Dialect, DialectTurn } from "../../exchange/dialect";
import { countPlanned } from "../../upstream/tokenizers";
import { planInputTokens, tokenizerFamilyOf } from "../../translate/input-tokens";
import { messagesToResponses } from "../../translate/messages/messages-to-responses";
import { withModel } from "../../translate/model-aliases";
import { normalizeResponsesRequest } from "../../translate/normalize";
import { messagesDialect } from "./messages-dialect";

function notStreamed(): never {
  throw new Error("count_tokens answers before any upstream call");
}

export const countTokensDialect: Dialect = {
  ...messagesDialect,
  endpoint: "messages.count_tokens",
  read({ body }, deps): DialectTurn {
    // The same translation as a conversation's, so the count is of what the upstream would read.
    const t = messagesToResponses(body);
    return {
      // Nothing is generated: no output bound to check or reserve.
      maxTokens: null,
      maxTokensParam: "max_tokens",
      stream: false,
      async prepare(call) {
        const request = normalizeResponsesRequest(withModel(t.request, call.model), deps.normalizeOptions, "chat");
        const inputTokens = await countPlanned(planInputTokens(request), tokenizerFamilyOf(call.model));
        await call.settlement.settle({ status: 200, errorCode: null, usage: null, upstreamClosed: true });
        return Response.json({ input_tokens: inputTokens }, { headers: call.headers() });
      },
      sink: notStreamed,
      reply: notStreamed,
    };
  },
};
