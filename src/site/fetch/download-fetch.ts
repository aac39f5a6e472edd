/**
 * The one way the site fetches bytes from elsewhere (proxy fallback and sync downloads): http/https only,
 * redirects followed by hand up to a bound (each hop through `fetch`, which the site guards: fetch-guard.ts),
 * credentials sent only to the origin they belong to, a deadline for the response headers and an idle bound on
 * the body, all tied to the caller's abort signal.
 */
import { isHttpUrl } from "./rules/http-url";

export class DownloadFetchError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    /** No answer at all: refused by the fetch guard, unknown name, connection refused, or no headers in time. */
    readonly unreachable = false,
  ) {
    super(message);
    this.name = "DownloadFetchError";
  }
}

export interface FollowOptions {
  fetch: typeof fetch;
  method?: "GET" | "HEAD";
  /** Sent on every hop (e.g. Range, Accept, User-Agent). */
  headers?: Record<string, string>;
  /**
   * Sent only while the URL's origin equals `credentialOrigin`: a token for the GitHub API must never reach
   * the storage host it redirects to (which also rejects requests carrying two kinds of auth).
   */
  credentialHeaders?: Record<string, string>;
  credentialOrigin?: string;
  maxRedirects?: number;
  /** Time allowed for each hop's response headers. */
  headersTimeoutMs?: number;
  /** A body silent this long is cut. */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function fetchFollowingRedirects(url: string, options: FollowOptions): Promise<Response> {
  const max = options.maxRedirects ?? 5;
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) throw new DownloadFetchError("aborted");
  options.signal?.addEventListener("abort", onAbort, { once: true });

  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      if (!isHttpUrl(current)) throw new DownloadFetchError(`refusing to fetch a non-http(s) address`);
      const headers: Record<string, string> = { ...options.headers };
      if (options.credentialHeaders && options.credentialOrigin && new URL(current).origin === options.credentialOrigin) {
        Object.assign(headers, options.credentialHeaders);
      }
      const timer = setTimeout(() => controller.abort(new Error("headers timeout")), options.headersTimeoutMs ?? 30_000);
      let res: Response;
      try {
        res = await options.fetch(current, { method: options.method ?? "GET", headers, redirect: "manual", signal: controller.signal });
      } catch {
        // One text for every way of not getting an answer (refused by the fetch guard, no such name, connection
        // refused, no response in time): a caller cannot probe which internal hosts and ports exist.
        throw new DownloadFetchError(`cannot reach ${new URL(current).host}`, null, true);
      } finally {
        clearTimeout(timer);
      }
      if (REDIRECTS.has(res.status)) {
        const location = res.headers.get("location");
        await res.body?.cancel().catch(() => {});
        if (!location) throw new DownloadFetchError(`redirect without a Location from ${new URL(current).host}`, res.status);
        if (hop >= max) throw new DownloadFetchError(`more than ${max} redirects`, res.status);
        current = new URL(location, current).toString();
        continue;
      }
      return withIdleBound(res, controller, options.idleTimeoutMs ?? 60_000, () =>
        options.signal?.removeEventListener("abort", onAbort),
      );
    }
  } catch (err) {
    options.signal?.removeEventListener("abort", onAbort);
    throw err;
  }
}

/** Re-wraps the body so a stall aborts the fetch; `done` runs once the body ends either way. */
function withIdleBound(res: Response, controller: AbortController, idleMs: number, done: () => void): Response {
  if (!res.body) {
    done();
    return res;
  }
  const reader = res.body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error("idle timeout")), idleMs);
  };
  const finish = () => {
    clearTimeout(timer);
    done();
  };
  const body = new ReadableStream<Uint8Array>({
    start: arm,
    async pull(c) {
      try {
        const { done: end, value } = await reader.read();
        if (end) {
          finish();
          c.close();
          return;
        }
        arm();
        c.enqueue(value);
      } catch (err) {
        finish();
        c.error(controller.signal.aborted ? new DownloadFetchError("the download stalled or was aborted") : err);
      }
    },
    cancel(reason) {
      finish();
      controller.abort(reason);
      return reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
