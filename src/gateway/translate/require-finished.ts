/**
 * A collected response must have finished before a dialect renders it: a failed or unfinished one never reaches a
 * caller as a normal answer (a chat `stop`, a message's `end_turn`). A failure gets the status a failure seen in the
 * stream gets: caller faults (context_length_exceeded, …) a 400, upstream rate limits a 429, the rest a 502.
 */
import { AppError } from "../../errors";
import { mapStreamFailure } from "../wire/failure";
import type { ResponseObject } from "../wire/responses-types";

export function requireFinished(response: ResponseObject): void {
  if (response.status === "failed") {
    // Strings only: the error is the upstream's JSON, and new Error({"toString": 0}) would throw a TypeError.
    const err = response.error as Record<string, unknown> | null | undefined;
    const code = typeof err?.code === "string" && err.code !== "" ? err.code : "upstream_error";
    const message = typeof err?.message === "string" && err.message !== "" ? err.message : "The upstream response failed.";
    throw mapStreamFailure(code, message);
  }
  if (response.status !== "completed" && response.status !== "incomplete") {
    throw new AppError("upstream_error", `The upstream response did not finish (status ${JSON.stringify(response.status)}).`);
  }
}
