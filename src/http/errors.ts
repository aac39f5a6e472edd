/** The one place errors become HTTP replies: always the envelope, never a stack trace. */
import { AppError, errorResponse, isAppError } from "../errors";
import type { Logger } from "../log";
import { isStorageUnavailable, storageUnavailable } from "../state/storage-errors";

/** What the NOT_FOUND branch needs to tell "no such path" (404) from "not with this method" (405). */
export interface RequestLine {
  method: string;
  path: string;
  /** The methods the app serves at a path; empty when it serves none there. */
  allowedMethods: (path: string) => readonly string[];
}

export function errorFromElysia(code: string | number, error: unknown, log: Logger, request?: RequestLine): AppError {
  if (isAppError(error)) return error;
  switch (code) {
    case "NOT_FOUND": {
      const allowed = request ? request.allowedMethods(request.path) : [];
      if (allowed.length > 0 && !allowed.includes(request!.method.toUpperCase())) {
        return new AppError("method_not_allowed", `${request!.method.toUpperCase()} is not allowed here; use ${allowed.join(" or ")}.`, {
          headers: { allow: allowed.join(", ") },
        });
      }
      return new AppError("not_found", "No such route.");
    }
    case "PARSE":
      return new AppError("invalid_json", "The request body could not be parsed.");
    case "VALIDATION": {
      const e = error as { all?: Array<{ path?: string; summary?: string; message?: string }> };
      const first = e.all?.[0];
      const param = first?.path ? first.path.replace(/^\//, "").replaceAll("/", ".") : null;
      const detail = first?.summary ?? first?.message ?? "invalid value";
      return new AppError("invalid_request", param ? `Invalid '${param}': ${detail}` : `Invalid request: ${detail}`, { param });
    }
    case "INVALID_COOKIE_SIGNATURE":
      return new AppError("unauthorized", "Invalid session.");
    default:
      if (isStorageUnavailable(error)) {
        log.error("storage unavailable", { error: error instanceof Error ? error.message : String(error) });
        return storageUnavailable();
      }
      log.error("unhandled error", { code: String(code), error: error instanceof Error ? error.stack ?? error.message : String(error) });
      return new AppError("internal_error", "Internal error.");
  }
}

interface RoutePattern {
  segments: string[];
  /** The pattern ends in `*`: any rest of the path matches. */
  rest: boolean;
  methods: Set<string>;
}

function splitPath(path: string): string[] {
  return path.split("/").filter((s) => s !== "");
}

/**
 * The methods served at each path, from the app's own route table (so it cannot drift from the routes):
 * `:param` matches one non-empty segment, a trailing `*` the rest; a trailing slash does not matter. A GET
 * route also answers HEAD (Bun serves HEAD from GET). Routes registered for every method (`all`) never reach
 * the NOT_FOUND branch and are left out. Built on first use, when every route is registered.
 */
export function createMethodTable(routes: () => ReadonlyArray<{ method: string; path: string }>): (path: string) => readonly string[] {
  let patterns: RoutePattern[] | null = null;
  const build = (): RoutePattern[] => {
    const byPath = new Map<string, RoutePattern>();
    for (const r of routes()) {
      const method = r.method.toUpperCase();
      if (method === "ALL" || method === "WS") continue;
      const segments = splitPath(r.path);
      const rest = segments.at(-1) === "*";
      if (rest) segments.pop();
      const key = `${segments.join("/")}${rest ? "/*" : ""}`;
      const p = byPath.get(key) ?? { segments, rest, methods: new Set<string>() };
      p.methods.add(method);
      if (method === "GET") p.methods.add("HEAD");
      byPath.set(key, p);
    }
    return [...byPath.values()];
  };
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
  const rank = (m: string) => (order.includes(m) ? order.indexOf(m) : order.length);
  return (path) => {
    patterns ??= build();
    const parts = splitPath(path);
    const methods = new Set<string>();
    for (const p of patterns) {
      if (p.rest ? parts.length < p.segments.length : parts.length !== p.segments.length) continue;
      if (p.segments.every((s, i) => s === parts[i] || (s.startsWith(":") && parts[i] !== ""))) for (const m of p.methods) methods.add(m);
    }
    return [...methods].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  };
}

/** The path of a request URL, or null when the target is no URL at all (CONNECT's `host:port`). */
export function pathnameOf(url: string): string | null {
  // The common absolute form read directly; anything with dot segments or no scheme goes through URL.
  const scheme = url.indexOf("://");
  if (scheme > 0) {
    const slash = url.indexOf("/", scheme + 3);
    if (slash > 0) {
      const query = url.indexOf("?", slash);
      const path = query < 0 ? url.slice(slash) : url.slice(slash, query);
      if (!path.includes(".")) return path;
    }
  }
  try {
    return new URL(url).pathname;
  } catch {
    return null;
  }
}

/** For a request target that is not a path (CONNECT's authority form): nothing here serves it. */
export function badTargetResponse(): Response {
  const err = new AppError("invalid_request", "The request target is not a path this server serves.");
  return errorResponse(err);
}

/**
 * Bun.serve's own `error` handler: whatever escapes the app (a throw in the server shell) is logged and
 * answered with the envelope, never with Bun's error page, which shows source lines in development mode.
 */
export function shellErrorResponse(error: unknown, log: Logger): Response {
  log.error("unhandled error", { error: error instanceof Error ? error.stack ?? error.message : String(error) });
  const err = new AppError("internal_error", "Internal error.");
  return errorResponse(err);
}
