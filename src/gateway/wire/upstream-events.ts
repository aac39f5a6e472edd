/**
 * The one reading of upstream events that everything shares (the event source that feeds the ledger, the
 * collector, both stream translators, the raw relay): what an in-band error says and what usage a terminal event
 * carries. Two readers classifying the same event differently is how a caller and the ledger came to disagree.
 */
import { TERMINAL_EVENT_TYPES, type JsonObject, type ResponsesStreamEvent, type ResponsesUsage } from "./responses-types";

export interface StreamError {
  code: string;
  message: string;
  param: string | null;
  /** The error object's own `type` (e.g. "server_error"), when it has one. */
  type: string | null;
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function ownType(err: JsonObject): string | null {
  return typeof err.type === "string" && err.type !== "" ? err.type : null;
}

const DEFAULT_ERROR_CODE = "upstream_error";

function errorFrom(src: JsonObject, fallbackCode: string, fallbackMessage: string, typeOf?: string | null): StreamError {
  const code =
    typeof src.code === "string" && src.code !== ""
      ? src.code
      : typeof src.code === "number"
        ? String(src.code)
        : fallbackCode;
  const message = typeof src.message === "string" && src.message !== "" ? src.message : fallbackMessage;
  const param = typeof src.param === "string" ? src.param : null;
  // The error's own type, when it is an error object (not the flat event, whose `type` is the event's).
  return { code, message, param, type: typeOf ?? null };
}

/**
 * The error an event reports, or null. Accepts the flat `error` event (openai-node types), the nested one
 * (`{type:"error", error:{…}}`, seen in real captures) and `response.failed` (`response.error`).
 */
export function streamErrorOf(ev: ResponsesStreamEvent): StreamError | null {
  if (ev.type === "error") {
    if (typeof ev.error === "string" && ev.error !== "") {
      return { code: DEFAULT_ERROR_CODE, message: ev.error, param: null, type: null };
    }
    if (isObject(ev.error)) {
      // A nested error's own `type` (e.g. "server_error") says more than a generic code when `code` is null.
      const nested = ev.error;
      const fallbackCode = typeof nested.type === "string" && nested.type !== "" ? nested.type : DEFAULT_ERROR_CODE;
      return errorFrom(nested, fallbackCode, "The upstream reported an error.", ownType(nested));
    }
    return errorFrom(ev, DEFAULT_ERROR_CODE, "The upstream reported an error.");
  }
  if (ev.type === "response.failed") {
    const err = isObject(ev.response) ? ev.response.error : null;
    const fallbackMessage = "The upstream response failed.";
    if (!isObject(err)) return { code: DEFAULT_ERROR_CODE, message: fallbackMessage, param: null, type: null };
    const fallbackCode = typeof err.type === "string" && err.type !== "" ? err.type : DEFAULT_ERROR_CODE;
    return errorFrom(err, fallbackCode, fallbackMessage, ownType(err));
  }
  return null;
}

/** Usage of a terminal event (completed, incomplete or failed); null for any other event or when absent. */
export function usageOf(ev: ResponsesStreamEvent): ResponsesUsage | null {
  if (!TERMINAL_EVENT_TYPES.has(ev.type) || !isObject(ev.response)) return null;
  const usage = ev.response.usage;
  return isObject(usage) ? (usage as ResponsesUsage) : null;
}
