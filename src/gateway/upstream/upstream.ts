/**
 * The only place that calls the upstream: base URL and key, timeouts, abort linked to the caller,
 * retries of failures that happened before anything reached the caller, and error mapping.
 */
import { AppError } from "../../errors";
import { mapUpstreamError } from "./upstream-errors";

export interface UpstreamOptions {
  baseUrl: string;
  apiKey: string;
  firstByteTimeoutMs: number;
  connectTimeoutMs: number;
  /** Socket idle limit while a body streams: a silent upstream is cut after this long. */
  idleTimeoutMs: number;
  retries: number;
  fetch?: typeof fetch;
}

export interface UpstreamReply {
  response: Response;
  /** Milliseconds from sending to the response headers. */
  ttfbMs: number;
}

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);
const MAX_ERROR_BODY = 64 * 1024;

/** Request headers a caller may pass through in raw mode (everything else is the gateway's business). */
const RAW_REQUEST_HEADERS = ["content-type", "accept", "openai-beta", "idempotency-key"];

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });
}

async function readBounded(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ERROR_BODY) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A broken error body still tells us the status.
  } finally {
    reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY));
}

export class Upstream {
  private readonly doFetch: typeof fetch;

  constructor(private readonly opts: UpstreamOptions) {
    this.doFetch = opts.fetch ?? fetch;
  }

  get configured(): boolean {
    return this.opts.baseUrl !== "";
  }

  private ensureConfigured(): void {
    if (!this.configured) {
      throw new AppError("upstream_not_configured", "No upstream is configured (set GANTRY_UPSTREAM_URL).");
    }
  }

  /**
   * POSTs a Responses request. Resolves once the upstream's headers arrived with a 2xx (or, in raw mode,
   * any status); throws an AppError otherwise. The body is left for the caller to stream.
   */
  async postResponses(body: string, signal: AbortSignal, options: { raw?: boolean; callerHeaders?: Headers } = {}): Promise<UpstreamReply> {
    this.ensureConfigured();
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.opts.apiKey}`,
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    if (options.raw && options.callerHeaders) {
      for (const name of RAW_REQUEST_HEADERS) {
        const v = options.callerHeaders.get(name);
        if (v !== null) headers[name] = v;
      }
    }
    let attempt = 0;
    for (;;) {
      const started = performance.now();
      let res: Response | null = null;
      try {
        res = await this.fetchWithDeadline(`${this.opts.baseUrl}/responses`, { method: "POST", headers, body }, signal, this.opts.firstByteTimeoutMs);
      } catch (err) {
        // Only transport failures (refused connection, no headers in time) are worth another attempt; a caller
        // that went away is not.
        const transient = err instanceof AppError && (err.code === "upstream_timeout" || err.code === "upstream_unavailable");
        if (!transient || signal.aborted || attempt >= this.opts.retries) throw err;
      }
      if (res !== null) {
        const ttfbMs = performance.now() - started;
        const retryable = RETRYABLE_STATUS.has(res.status) && attempt < this.opts.retries;
        if (res.ok || (options.raw && !retryable)) return { response: res, ttfbMs };
        if (options.raw) {
          await res.body?.cancel().catch(() => {});
        } else {
          const text = await readBounded(res);
          // A refusal (4xx, the gateway's credential included) is the same answer however often it is asked.
          if (!retryable) throw mapUpstreamError(res.status, text, res.headers.get("retry-after"), res.headers);
        }
      }
      attempt += 1;
      await sleep(Math.min(4000, 250 * 2 ** (attempt - 1)), signal);
      if (signal.aborted) throw new AppError("upstream_error", "The caller went away.");
    }
  }

  /** GET {base}/models, as JSON. */
  async listModels(): Promise<unknown> {
    this.ensureConfigured();
    const res = await this.fetchWithDeadline(
      `${this.opts.baseUrl}/models`,
      { method: "GET", headers: { authorization: `Bearer ${this.opts.apiKey}`, accept: "application/json" } },
      null,
      this.opts.connectTimeoutMs,
    );
    if (!res.ok) throw mapUpstreamError(res.status, await readBounded(res), res.headers.get("retry-after"));
    try {
      return await res.json();
    } catch {
      throw new AppError("upstream_error", "The upstream's model list is not valid JSON.");
    }
  }

  /** fetch with a deadline for the headers only; the body may then stream for as long as it needs. */
  private async fetchWithDeadline(url: string, init: RequestInit, callerSignal: AbortSignal | null, deadlineMs: number): Promise<Response> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, deadlineMs);
    callerSignal?.addEventListener("abort", () => controller.abort(), { once: true });
    try {
      // Bun's own idle timer (5 min by default) would cut long silent streams: ours is a setting.
      const bunInit = { ...init, signal: controller.signal, redirect: "manual", timeout: this.opts.idleTimeoutMs };
      return await this.doFetch(url, bunInit as RequestInit);
    } catch (err) {
      if (timedOut) throw new AppError("upstream_timeout", `The upstream did not answer within ${deadlineMs} ms.`);
      if (callerSignal?.aborted) throw new AppError("upstream_error", "The caller went away.");
      throw new AppError("upstream_unavailable", `The upstream could not be reached: ${(err as Error).message}`);
    } finally {
      // The listener stays: the body streams on after this, and the caller's abort must still reach it.
      clearTimeout(timer);
    }
  }
}
