/** The reply of a `/v1/messages` call that failed before its first byte: Anthropic's error envelope, type and status. */
import type { AppError } from "../../../errors";
import { messagesErrorBody, messagesErrorOf } from "../../translate/messages/messages-errors";
import { UpstreamRefusal } from "../../upstream/upstream-errors";

export function messagesErrorReply(err: AppError, headers: Record<string, string>): Response {
  const { type, status } = messagesErrorOf(err, err instanceof UpstreamRefusal ? err.upstreamStatus : undefined);
  return new Response(JSON.stringify(messagesErrorBody(type, err.message)), {
    status,
    headers: { "content-type": "application/json", ...err.headers, ...headers },
  });
}
