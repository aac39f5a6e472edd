/** The reply of a `/v1/messages` call that failed before its first byte: Anthropic's error envelope, type and status. */
import type { AppError } from "../../../errors";
import { messagesErrorBody, messagesErrorOf } from "../../translate/messages/messages-errors";
import { UpstreamRefusal } from "../../upstream/upstream-errors";

/** Where this dialect's callers put the key: admission's own words name only the Authorization header. */
const MISSING_KEY = "You didn't provide an API key. Send it in the x-api-key header (or as 'Authorization: Bearer <API key>').";

export function messagesErrorReply(err: AppError, headers: Record<string, string>): Response {
  const { type, status } = messagesErrorOf(err, err instanceof UpstreamRefusal ? err.upstreamStatus : undefined);
  const message = err.code === "missing_api_key" ? MISSING_KEY : err.message;
  return new Response(JSON.stringify(messagesErrorBody(type, message)), {
    status,
    headers: { "content-type": "application/json", ...err.headers, ...headers },
  });
}
