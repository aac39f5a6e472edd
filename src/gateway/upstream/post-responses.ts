/**
 * How the routes call the upstream with a translated request: parameters known to be refused for the model are
 * left out, and a 400 that names one more (before anything reached the caller) is answered by leaving that one out
 * too and asking again, as long as each refusal names a parameter not dropped yet, at most MAX_REFUSED_RETRIES
 * times: a client sending temperature and top_p (LlamaIndex's chat class always does) to a model that refuses both
 * gets its answer on the first call.
 */
import type { ResponsesRequest } from "../wire/responses-types";
import type { Upstream, UpstreamReply } from "./upstream";
import { unsupportedParameter, withoutParams, type ParameterQuirks } from "./unsupported-params";

export interface PostDeps {
  upstream: Pick<Upstream, "postResponses">;
  quirks: ParameterQuirks;
}

export interface PostedRequest {
  reply: UpstreamReply;
  /** What was sent, after the drops. */
  sent: ResponsesRequest;
  /** The parameters the caller set that the upstream did not get. */
  dropped: string[];
  /** The JSON sent (its size estimates the input's tokens when the upstream reports none). */
  sentJson: string;
}

/** Retries on "Unsupported parameter" refusals per call: each one names a new parameter, so this bounds the round trips. */
export const MAX_REFUSED_RETRIES = 8;

export async function postResponses(deps: PostDeps, model: string, request: ResponsesRequest, signal: AbortSignal): Promise<PostedRequest> {
  const first = withoutParams(request, deps.quirks.droppedFor(model));
  let sent = first.request;
  const dropped = first.dropped;
  for (let retries = 0; ; retries++) {
    const sentJson = JSON.stringify(sent);
    try {
      const reply = await deps.upstream.postResponses(sentJson, signal);
      return { reply, sent, dropped, sentJson };
    } catch (err) {
      const param = unsupportedParameter(err);
      // A refusal naming a parameter already gone (or never sent) would only repeat itself: the caller gets it.
      if (param === null || !Object.hasOwn(sent, param) || retries >= MAX_REFUSED_RETRIES || signal.aborted) throw err;
      deps.quirks.learn(model, param);
      const next = withoutParams(sent, [param]);
      sent = next.request;
      dropped.push(...next.dropped);
    }
  }
}
