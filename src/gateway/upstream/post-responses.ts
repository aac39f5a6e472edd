/**
 * How the routes call the upstream with a translated request: parameters known to be refused for the model are
 * left out, and a 400 that names one more (before anything reached the caller) is answered by leaving that one
 * out too and asking once more.
 */
import type { ResponsesRequest } from "../responses-types";
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

export async function postResponses(deps: PostDeps, model: string, request: ResponsesRequest, signal: AbortSignal): Promise<PostedRequest> {
  const first = withoutParams(request, deps.quirks.droppedFor(model));
  const firstJson = JSON.stringify(first.request);
  try {
    const reply = await deps.upstream.postResponses(firstJson, signal);
    return { reply, sent: first.request, dropped: first.dropped, sentJson: firstJson };
  } catch (err) {
    const param = unsupportedParameter(err);
    if (param === null || !Object.hasOwn(first.request, param)) throw err;
    deps.quirks.learn(model, param);
    const second = withoutParams(first.request, [param]);
    const secondJson = JSON.stringify(second.request);
    const reply = await deps.upstream.postResponses(secondJson, signal);
    return { reply, sent: second.request, dropped: [...first.dropped, ...second.dropped], sentJson: secondJson };
  }
}
