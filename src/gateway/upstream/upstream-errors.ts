/**
 * Maps upstream failures into the error envelope (pure). The upstream answers refusals either FastAPI-style
 * (`{"detail": "..."}`) or OpenAI-style (`{"error": {...}}`); both are understood.
 */
import { AppError, type AppErrorOptions, type ErrorCode } from "../../errors";

export function parseUpstreamErrorBody(text: string): { message: string; code: string | null; type: string | null; param: string | null; json?: false } {
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: text.trim().slice(0, 500) || "upstream error", code: null, type: null, param: null, json: false };
  }
  if (parsed && typeof parsed === "object") {
    const e = parsed.error;
    if (e && typeof e === "object") {
      return {
        message: String(e.message ?? "upstream error"),
        code: e.code != null ? String(e.code) : null,
        type: e.type != null ? String(e.type) : null,
        param: e.param != null ? String(e.param) : null,
      };
    }
    if (typeof e === "string") return { message: e, code: null, type: null, param: null };
    const d = parsed.detail;
    if (typeof d === "string") return { message: d, code: null, type: null, param: null };
    if (d !== undefined) return { message: JSON.stringify(d).slice(0, 500), code: null, type: null, param: null };
    if (typeof parsed.message === "string") return { message: parsed.message, code: null, type: null, param: null };
  }
  return { message: text.slice(0, 500) || "upstream error", code: null, type: null, param: null };
}

/**
 * An upstream refusal as the caller gets it, with what the upstream really said kept apart for the log
 * (exchange/error-reply.ts logs `detail` under the request id; a `generic` message gets the request id appended).
 */
export class UpstreamRefusal extends AppError {
  private redacted: string | null = null;

  constructor(
    code: ErrorCode,
    message: string,
    options: AppErrorOptions,
    readonly upstreamStatus: number,
    /** The upstream's body as it came (its `detail` is what may be logged). */
    private readonly body: string,
    /** The message says nothing of the upstream's own words: the request id is what lets an operator find them. */
    readonly generic: boolean,
  ) {
    super(code, message, options);
  }

  /**
   * The upstream's body (bounded, keys redacted): for the log only, never the caller. Redacted when first read: the
   * refusal of an attempt the pool fails over from is usually never logged, and should not pay for it.
   */
  get detail(): string {
    return (this.redacted ??= upstreamDetail(this.body));
  }

  /** The error code in the upstream's body (`insufficient_quota`, `rate_limit_exceeded`), for the pool's rules. */
  upstreamCode: string | null = null;
  /** The upstream reply's headers (its rate-limit reset headers decide a cooldown), when it answered. */
  upstreamHeaders: Headers | null = null;
}

const DETAIL_MAX = 2000;
const MESSAGE_MAX = 500;
/** Codes, types and params are passed on only when they look like identifiers (`invalid_value`, `input[0].content`). */
const TOKEN = /^[A-Za-z0-9_.\-]{1,64}$/;
const PARAM = /^[A-Za-z0-9_.\-[\]]{1,128}$/;

const KEYS: Array<[RegExp, string]> = [
  [/\bBearer\s+\S+/gi, "Bearer [key]"],
  // API keys by their usual prefixes, and masked ones ("sk-proj-****abcd", "gk-...1234").
  [/\b(?:sk|rk|pk|gk|gat|sess|key|api[-_]?key)[-_][A-Za-z0-9*._-]{6,}/gi, "[key]"],
  [/\S*\*{3,}\S*/g, "[key]"],
];
const PLACES: Array<[RegExp, string]> = [
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()]+/gi, "[url]"],
  [/\b[A-Za-z]:\\[^\s"']+/g, "[path]"],
  [/\[[0-9A-Fa-f:.]{2,}\](?::\d{1,5})?/g, "[host]"],
  [/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g, "[host]"],
  [/\b[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*:\d{2,5}\b/g, "[host]"],
  [
    /\b(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+(?:com|net|org|io|ai|dev|app|cloud|internal|local|localdomain|lan|corp|intra|intranet|home|svc|cluster|arpa)\b/gi,
    "[host]",
  ],
  [/\blocalhost\b/gi, "[host]"],
  // Absolute paths of two segments or more (a lone "/x" is too often something else).
  [/(?<![\w\])}.:/-])(?:\/[\w.@~+-]+){2,}\/?/g, "[path]"],
];

function replaceAll(text: string, rules: Array<[RegExp, string]>): string {
  let out = text;
  for (const [re, by] of rules) out = out.replace(re, by);
  return out;
}

/** What may be logged of an upstream body: bounded, credentials redacted. */
export function upstreamDetail(text: string): string {
  return replaceAll(text.length > DETAIL_MAX ? text.slice(0, DETAIL_MAX) + "…" : text, KEYS);
}

/**
 * An upstream's message about the caller's request, fit to pass on: URLs, paths, host names, addresses and keys
 * replaced by a placeholder, bounded. Null when nothing meaningful is left.
 */
export function safeUpstreamMessage(message: string): string | null {
  const cleaned = replaceAll(replaceAll(message, KEYS), PLACES).replace(/\s+/g, " ").trim();
  if (!/[A-Za-z]{2}/.test(cleaned.replace(/\[(?:url|path|host|key)\]/g, ""))) return null;
  return cleaned.length > MESSAGE_MAX ? cleaned.slice(0, MESSAGE_MAX) + "…" : cleaned;
}

function token(v: string | null, re = TOKEN): string | null {
  return v !== null && re.test(v) ? v : null;
}

/**
 * The caller never gets the upstream's body verbatim (it can name internal hosts, paths, the gateway's masked key):
 * - 401/403 (the gateway's own credential is at fault, not the caller's) and 5xx: 502 with a generic message;
 * - 429: 429 with its Retry-After, a generic message (an upstream's names its organisation and limits);
 * - other 4xx (the caller's request was refused): the same status, the upstream's `code`, `type` and `param` when
 *   they look like identifiers, and its message when it sent one as JSON (`{"error":{"message"}}`, `{"detail"}`),
 *   with URLs, paths, hosts and keys taken out ("Unsupported parameter: 'x'", context length exceeded, "Invalid
 *   'input[0]'" stay readable); a body that is not JSON gets a generic message.
 * What the upstream said goes to the log, under the request id.
 */
export function mapUpstreamError(status: number, bodyText: string, retryAfter: string | null, headers: Headers | null = null): UpstreamRefusal {
  const body = parseUpstreamErrorBody(bodyText);
  const err = refusalOf(status, bodyText, body, retryAfter);
  err.upstreamCode = body.code;
  err.upstreamHeaders = headers;
  return err;
}

function refusalOf(status: number, bodyText: string, body: ReturnType<typeof parseUpstreamErrorBody>, retryAfter: string | null): UpstreamRefusal {
  const detail = bodyText;
  if (status === 401 || status === 403) {
    return new UpstreamRefusal("upstream_error", `The upstream refused the gateway's credentials (${status}).`, {}, status, detail, true);
  }
  if (status === 429) {
    return new UpstreamRefusal(
      "too_many_requests",
      "Rate limit reached upstream; try again after the Retry-After delay.",
      {
        rawCode: token(body.code) ?? "upstream_rate_limited",
        type: token(body.type) ?? "invalid_request_error",
        headers: { "retry-after": retryAfter ?? "1" },
      },
      status,
      detail,
      true,
    );
  }
  if (status >= 400 && status < 500) {
    const message = body.json !== false ? safeUpstreamMessage(body.message) : null;
    return new UpstreamRefusal(
      "invalid_request",
      message ?? `The upstream refused the request (${status}).`,
      {
        status,
        rawCode: token(body.code) ?? "upstream_invalid_request",
        type: token(body.type) ?? "invalid_request_error",
        param: token(body.param, PARAM),
      },
      status,
      detail,
      message === null,
    );
  }
  return new UpstreamRefusal("upstream_error", `The upstream failed (${status}).`, {}, status, detail, true);
}
