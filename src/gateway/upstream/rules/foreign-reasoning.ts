/**
 * Encrypted reasoning can be read only by the upstream account that produced it: a continued conversation sent to
 * another account leaves those items out (pure). The rest of the conversation goes as it is; the model reasons
 * again where it needs to.
 */
import type { JsonObject, ResponsesRequest } from "../../wire/responses-types";

/**
 * The request without the reasoning items whose `encrypted_content` another account produced (an owner of null,
 * unknown, counts as another). The same request when nothing is to be dropped.
 */
export function withoutForeignReasoning(request: ResponsesRequest, account: string, owners: ReadonlyMap<string, string | null>): ResponsesRequest {
  const input = request.input;
  if (owners.size === 0 || !Array.isArray(input)) return request;
  const foreign = (it: JsonObject) =>
    it !== null && typeof it === "object" && it.type === "reasoning" && typeof it.encrypted_content === "string" && owners.has(it.encrypted_content) && owners.get(it.encrypted_content) !== account;
  if (!input.some(foreign)) return request;
  return { ...request, input: input.filter((it: JsonObject) => !foreign(it)) };
}
