/**
 * For callers that asked for no stream: reads the whole upstream stream (markup cleaned) into the final
 * response object. A failure becomes the AppError the caller gets, with whatever usage was known settled.
 */
import type { GatewayCall } from "../call";
import { createResponseCollector } from "./collect";
import { IDLE, type UpstreamEventSource } from "./event-source";
import { mapStreamFailure, upstreamStreamError } from "./failure";
import type { ResponseObject } from "../responses-types";
import { createResponsesStreamRewriter } from "./stream-rewrite";

/** `keep`: what to do with a finished response before the call is settled (keeping it, with Gantry's ids). */
export async function collectUpstream(
  call: GatewayCall,
  source: UpstreamEventSource,
  toolNames: Set<string>,
  keep?: (response: ResponseObject) => Promise<ResponseObject>,
): Promise<ResponseObject> {
  const rewriter = createResponsesStreamRewriter({ toolNames });
  const collector = createResponseCollector();
  try {
    for await (const batch of source.read()) {
      if (batch === IDLE) continue;
      for (const { ev } of batch) for (const o of rewriter.push(ev)) collector.push(o);
    }
    for (const o of rewriter.finish()) collector.push(o);
  } catch (err) {
    throw upstreamStreamError(err);
  }
  const failure = source.endFailure;
  if (failure) {
    const err = mapStreamFailure(failure.code, failure.message);
    await call.finish(err.status, err.code, source.usage);
    throw err;
  }
  const response = keep ? await keep(collector.result()) : collector.result();
  await call.finish(200, null, source.usage);
  call.ensureRecorded();
  return response;
}
