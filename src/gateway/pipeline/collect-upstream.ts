/**
 * For callers that asked for no stream: runs the upstream stream through the pipeline into the final response
 * object. A failure becomes the AppError the caller gets, settled with whatever usage was known.
 */
import type { PipelineCall } from "./pipeline-call";
import type { UpstreamEventSource } from "./event-source";
import type { ResponseObject } from "../wire/responses-types";
import { drainPipeline } from "./pipeline";
import { CollectSink, type CollectCut } from "./collect-sink";
import { upstreamStreamError } from "../wire/failure";

/**
 * `keep`: what to do with a finished response before the call is settled (keeping it, with Gantry's ids). `cut`: where
 * the reply may end before the upstream's end (then the upstream is cut there).
 */
export async function collectUpstream(
  call: PipelineCall,
  source: UpstreamEventSource,
  toolNames: ReadonlySet<string>,
  keep?: (response: ResponseObject) => Promise<ResponseObject>,
  cut?: CollectCut,
): Promise<ResponseObject> {
  source.readsAll = true;
  const sink = new CollectSink(toolNames, keep, cut, source);
  await drainPipeline(call, source, sink);
  // The stream's failure, or why the answer is withheld (not recorded, or not kept: the settlement said so).
  if (sink.error) throw sink.error;
  // The caller went away (the pipeline settled it as 499): the route's failure path answers nobody.
  if (!sink.response) throw upstreamStreamError(new Error("the stream ended without a response"));
  return sink.response;
}
