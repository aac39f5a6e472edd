/**
 * The integration tests' upstream: a real HTTP server on loopback that refuses what the real upstream refuses
 * (same checks as the demo upstream), streams in the real wire format with its framing quirks, and injects
 * transport and protocol faults on demand. It also counts streams in flight so concurrency limits and
 * abort propagation can be asserted from the upstream's side.
 */

import type { ResponsesStreamEvent, ResponsesUsage } from "../../src/gateway/wire/responses-types";
import {
  buildResponseEvents,
  encodeEventFrames,
  type ResponseEventSpec,
  type SimulatedCall,
} from "../../src/gateway/simulator/events";
import {
  ALL_QUIRKS,
  checkUpstreamQuirks,
  estimateInputTokens,
  lastUserText,
  type UpstreamQuirk,
} from "../../src/gateway/simulator/simulated-upstream";
import { sampleFromSchema } from "../../src/gateway/simulator/tool-arguments";

export type Scenario =
  /**
   * `beforeTerminal`: awaited after every event but the terminal one, which is sent once it resolves (a test holds
   * the stream's end at the moment it wants, e.g. until a store is down).
   */
  | { kind: "text"; text: string; deltas?: number; delayMs?: number; usage?: Partial<ResponsesUsage>; beforeTerminal?: () => Promise<void> }
  | { kind: "calls"; calls: SimulatedCall[]; text?: string; usage?: Partial<ResponsesUsage> }
  | { kind: "reasoning-call"; reasoning?: string; calls?: SimulatedCall[]; encrypted?: boolean; usage?: Partial<ResponsesUsage> }
  /** Text with XML-like tool markup, cut into small deltas so the tags straddle delta boundaries. */
  | { kind: "markup"; text: string; deltas?: number }
  | { kind: "status"; status: 400 | 401 | 402 | 403 | 408 | 429 | 500 | 502 | 503; body?: unknown; headers?: Record<string, string> }
  /** Never answers; the request stays open until the client gives up or the server closes. */
  | { kind: "hang-before-headers" }
  /** Sends headers and the first N events, then goes silent with the connection open. */
  | { kind: "hang-mid-stream"; afterEvents: number }
  /** Sends the first N events, then ends the stream cleanly (no terminal event). */
  | { kind: "end-after"; afterEvents: number }
  /** Sends the first N events, then resets the TCP connection (client sees ECONNRESET, not a clean EOF). */
  | { kind: "reset-mid-stream"; afterEvents: number }
  /** After N events, a frame whose data is truncated JSON; then the rest of the stream, or a clean end. */
  | { kind: "malformed"; afterEvents: number; then?: "continue" | "end" }
  /** An `error` event (nested or flat form) after response.in_progress, followed by response.failed unless terminal:false. */
  | { kind: "error-event"; nested: boolean; form?: "string"; code?: string; message?: string; terminal?: boolean }
  | { kind: "failed"; code?: string; message?: string; text?: string; usage?: Partial<ResponsesUsage> | null }
  | { kind: "incomplete"; reason?: string; text?: string }
  /** A normal reply whose stream ends cleanly right before the terminal event. */
  | { kind: "no-terminal"; text?: string }
  /** The whole stream written in tiny byte chunks (splitting frames and UTF-8 sequences) with delayMs between chunks. */
  | { kind: "trickle"; delayMs: number; chunkBytes?: number; text?: string }
  /** response.completed with `output: []`; the items arrive only as events. */
  | { kind: "empty-output"; text?: string }
  /**
   * A whole reply, then the connection kept open after its terminal event: for `ms`, then a clean end (none: until
   * the client goes away), as upstreams behind some proxies do.
   */
  | { kind: "linger"; ms?: number; text?: string }
  /** delayMs before every delta: a long-lived stream for concurrency and abort tests. */
  | { kind: "slow"; delayMs: number; text?: string; deltas?: number }
  /**
   * After N events (default 3), one text delta whose data is `bytes` long, written in `chunkBytes` pieces (64 KiB)
   * as the reader pulls them (the bytes are never held whole here), then the rest of the stream.
   */
  | { kind: "huge-event"; bytes: number; afterEvents?: number; chunkBytes?: number };

export interface FakeUpstreamOptions {
  scenario?: Scenario | ((body: any) => Scenario);
  models?: string[];
  /** true switches off every refusal (for raw-passthrough tests); a list switches off just those. */
  lenient?: boolean | UpstreamQuirk[];
  /** Send `Content-Type: text/event-stream`; by default streams carry no Content-Type, as seen in the wild. */
  contentType?: boolean;
  crlf?: boolean;
  /** Interleave `: keep-alive` comment frames. */
  comments?: boolean;
  /** Interleave frames with an `event:` line and no data. */
  bareEvents?: boolean;
  /** Append `data: [DONE]` (the real upstream never does). */
  done?: boolean;
  /** When set, any other bearer key gets a 401; otherwise any bearer key is accepted. */
  apiKey?: string;
  /** Refuse models that are not in the model list, as the real upstream does. Off by default. */
  rejectUnknownModels?: boolean;
  /** Extra headers on every successful stream, e.g. x-codex-primary-used-percent. */
  streamHeaders?: Record<string, string>;
  /** Every response and item id the same in every reply (as some upstreams number them): ids must not be trusted to be unique. */
  fixedIds?: boolean;
  /** Parameters refused outright, as stream-only backends do: `{"detail":"Unsupported parameter: temperature"}`. */
  unsupportedParams?: string[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** Lowercased names, authorization included, so tests can check which upstream key was sent. */
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text when the body is not JSON, or null when empty. */
  body: any;
}

export interface FakeUpstream {
  /** Base URL including /v1. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Response requests currently in progress (from arrival until the stream ends or the client aborts). */
  readonly open: number;
  /** High-water mark of `open`. */
  readonly maxOpen: number;
  /** Starts a new high-water mark from the streams open now. */
  resetMaxOpen(): void;
  /** Streams that ended because the client went away. */
  readonly aborted: number;
  /** Pieces of stream bodies handed to callers so far, all streams together (one event each, or one trickle chunk). */
  readonly written: number;
  /** No argument restores the default echo reply. */
  setScenario(s?: Scenario | ((body: any) => Scenario)): void;
  setModels(ids: string[]): void;
  close(): Promise<void>;
}

type Step =
  | { op: "write"; bytes: Uint8Array; delayMs: number }
  | { op: "hang" }
  | { op: "pause"; ms: number }
  | { op: "reset" }
  | { op: "wait"; until: () => Promise<void> };
// "pause" ends the stream after its wait: it is only ever the last step.

const DEFAULT_STATUS_BODIES: Record<number, unknown> = {
  400: { detail: "Bad Request" },
  401: {
    error: {
      message: "Your authentication token has expired. Please try signing in again.",
      type: "invalid_request_error",
      param: null,
      code: "token_expired",
    },
  },
  429: {
    error: {
      message: "Rate limit reached for requests. Please try again in 1s.",
      type: "requests",
      param: null,
      code: "rate_limit_exceeded",
    },
  },
  402: { error: { message: "Payment required.", type: "billing_error", param: null, code: "payment_required" } },
  403: { error: { message: "Your organization is not allowed to use this model.", type: "invalid_request_error", param: null, code: "forbidden" } },
  408: { error: { message: "Request timed out.", type: "timeout", param: null, code: null } },
  500: { error: { message: "An error occurred while processing your request.", type: "server_error", param: null, code: null } },
  // Load balancers in front of the upstream answer 502 with HTML, not JSON.
  502: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n",
  503: { error: { message: "The server is overloaded or not ready yet.", type: "server_error", param: null, code: null } },
};

/** Depends on the request, so a test cannot pass with a reply that was never routed through the gateway. */
function echoText(body: any): string {
  return `Echo: ${lastUserText(body ?? {}) || "(empty)"}`;
}

let responseCounter = 0;

function eventsFor(s: Scenario, body: any, fixedIds = false): ResponsesStreamEvent[] {
  const base: ResponseEventSpec = {
    id: fixedIds ? "resp_fixed" : `resp_fake${String(++responseCounter).padStart(6, "0")}`,
    model: typeof body?.model === "string" ? body.model : "unknown",
    createdAt: Math.floor(Date.now() / 1000),
    request: body ?? {},
    usage: { input_tokens: estimateInputTokens(body ?? {}) },
  };
  const withInput = (u?: Partial<ResponsesUsage> | null) => (u === null ? null : { ...base.usage, ...u });
  switch (s.kind) {
    case "text":
      return buildResponseEvents({ ...base, text: s.text, deltas: s.deltas, usage: withInput(s.usage) });
    case "calls":
      return buildResponseEvents({ ...base, text: s.text, calls: s.calls, usage: withInput(s.usage) });
    case "reasoning-call": {
      const tool = Array.isArray(body?.tools) ? body.tools.find((t: any) => t?.type === "function" && t.name) : undefined;
      const userText = lastUserText(body ?? {});
      const args = tool ? sampleFromSchema(tool.parameters ?? { type: "object", properties: {} }, userText) : { query: userText };
      const calls = s.calls ?? [{ name: tool?.name ?? "lookup", arguments: JSON.stringify(args) }];
      return buildResponseEvents({
        ...base,
        reasoning: s.reasoning ?? "Deciding which tool answers this.",
        encryptedReasoning: s.encrypted ? "gAAAABfake-encrypted-reasoning" : undefined,
        calls,
        usage: withInput(s.usage),
      });
    }
    case "markup":
      return buildResponseEvents({ ...base, text: s.text, deltas: s.deltas ?? Math.ceil(s.text.length / 5) });
    case "error-event":
      return buildResponseEvents({
        ...base,
        errorEvent: s.form ?? (s.nested ? "nested" : "flat"),
        error: { code: s.code ?? "server_error", message: s.message ?? "An error occurred while processing your request." },
        terminal: s.terminal === false ? "none" : "failed",
      });
    case "failed":
      return buildResponseEvents({
        ...base,
        text: s.text,
        terminal: "failed",
        error: { code: s.code ?? "server_error", message: s.message ?? "An error occurred while processing your request." },
        usage: withInput(s.usage),
      });
    case "incomplete":
      return buildResponseEvents({ ...base, text: s.text ?? echoText(body), terminal: "incomplete", incompleteReason: s.reason });
    case "no-terminal":
      return buildResponseEvents({ ...base, text: s.text ?? echoText(body), terminal: "none" });
    case "empty-output":
      return buildResponseEvents({ ...base, text: s.text ?? echoText(body), emptyTerminalOutput: true });
    case "trickle":
      return buildResponseEvents({ ...base, text: s.text ?? echoText(body) });
    case "slow":
      return buildResponseEvents({ ...base, text: s.text ?? echoText(body), deltas: s.deltas ?? 5 });
    default:
      return buildResponseEvents({ ...base, text: echoText(body) });
  }
}

const encoder = new TextEncoder();

function stepsFor(s: Scenario, events: ResponsesStreamEvent[], frames: string[], nl: string): Step[] {
  const deltaDelay = s.kind === "slow" ? s.delayMs : s.kind === "text" ? (s.delayMs ?? 0) : 0;
  const writes: Step[] = frames.map((text, i) => ({
    op: "write",
    bytes: encoder.encode(text),
    delayMs: events[i]?.type.endsWith(".delta") ? deltaDelay : 0,
  }));
  switch (s.kind) {
    case "text": {
      if (!s.beforeTerminal) return writes;
      const terminal = events.findIndex((e) => e.type === "response.completed");
      return [...writes.slice(0, terminal), { op: "wait", until: s.beforeTerminal }, ...writes.slice(terminal)];
    }
    case "hang-mid-stream":
      return [...writes.slice(0, s.afterEvents), { op: "hang" }];
    case "reset-mid-stream":
      return [...writes.slice(0, s.afterEvents), { op: "reset" }];
    case "end-after":
      return writes.slice(0, s.afterEvents);
    case "linger":
      return [...writes, s.ms === undefined ? { op: "hang" } : { op: "pause", ms: s.ms }];
    case "huge-event": {
      const after = s.afterEvents ?? 3;
      const size = s.chunkBytes ?? 64 * 1024;
      const piece = new Uint8Array(size).fill(120); // "x"
      const huge: Step[] = [{ op: "write", bytes: encoder.encode(`event: response.output_text.delta${nl}data: {"type":"response.output_text.delta","delta":"`), delayMs: 0 }];
      for (let left = s.bytes; left > 0; left -= size) huge.push({ op: "write", bytes: left >= size ? piece : piece.subarray(0, left), delayMs: 0 });
      huge.push({ op: "write", bytes: encoder.encode(`"}${nl}${nl}`), delayMs: 0 });
      return [...writes.slice(0, after), ...huge, ...writes.slice(after)];
    }
    case "malformed": {
      const bad: Step = {
        op: "write",
        bytes: encoder.encode(`event: response.output_text.delta${nl}data: {"type":"response.output_text.delta","delta":"unterminated${nl}${nl}`),
        delayMs: 0,
      };
      const rest = s.then === "end" ? [] : writes.slice(s.afterEvents);
      return [...writes.slice(0, s.afterEvents), bad, ...rest];
    }
    case "trickle": {
      // Split the bytes, not the text, so a chunk can end inside a UTF-8 sequence as TCP reads can.
      const bytes = encoder.encode(frames.join(""));
      const size = Math.max(1, s.chunkBytes ?? 5);
      const steps: Step[] = [];
      for (let i = 0; i < bytes.length; i += size) {
        steps.push({ op: "write", bytes: bytes.subarray(i, i + size), delayMs: i === 0 ? 0 : s.delayMs });
      }
      return steps;
    }
    default:
      return writes;
  }
}

function statusResponse(s: Extract<Scenario, { kind: "status" }>): Response {
  const body = s.body ?? DEFAULT_STATUS_BODIES[s.status] ?? { detail: "Error" };
  const isText = typeof body === "string";
  const contentType = isText ? (s.status === 502 ? "text/html" : "text/plain") : "application/json";
  return new Response(isText ? body : JSON.stringify(body), {
    status: s.status,
    headers: { "content-type": contentType, ...(s.headers ?? {}) },
  });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/**
 * Several fake upstreams at once (the accounts of a pool), and the `[[upstreams]]` settings that name them
 * `a`, `b`, … with the given priorities and weights.
 */
export async function startFakeUpstreams(
  specs: Array<FakeUpstreamOptions & { priority?: number; weight?: number; models?: string[]; maxConcurrency?: number | null; modelMap?: Record<string, string> }>,
): Promise<{ upstreams: FakeUpstream[]; accounts: Array<{ name: string; url: string; apiKey: string; keyInline: boolean; models: string[]; modelMap: Record<string, string>; priority: number; weight: number; maxConcurrency: number | null }>; close(): Promise<void> }> {
  const upstreams = await Promise.all(specs.map((s) => startFakeUpstream(s)));
  const accounts = specs.map((s, i) => ({
    name: String.fromCharCode(97 + i),
    url: upstreams[i]!.url,
    apiKey: `upstream-key-${String.fromCharCode(97 + i)}-0123456789`,
    keyInline: false,
    models: ["*"],
    modelMap: s.modelMap ?? {},
    priority: s.priority ?? 1,
    weight: s.weight ?? 1,
    maxConcurrency: s.maxConcurrency ?? null,
  }));
  return { upstreams, accounts, close: async () => void (await Promise.all(upstreams.map((u) => u.close()))) };
}

export async function startFakeUpstream(opts: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  let scenario: Scenario | ((body: any) => Scenario) | undefined = opts.scenario;
  let models = opts.models ?? ["gpt-5.4", "gpt-5.4-mini", "fake-model"];
  const skip = new Set<UpstreamQuirk>(
    opts.lenient === true
      ? ALL_QUIRKS
      : Array.isArray(opts.lenient)
        ? opts.lenient
        : [],
  );
  const requests: RecordedRequest[] = [];
  let open = 0;
  let maxOpen = 0;
  let aborted = 0;
  let written = 0;
  // Everything still waiting on the client; closing the server must release these too.
  const pending = new Set<() => void>();

  /** Counts one in-flight request; the returned function releases it exactly once. */
  function track(): (byAbort: boolean) => void {
    open++;
    maxOpen = Math.max(maxOpen, open);
    let released = false;
    return (byAbort) => {
      if (released) return;
      released = true;
      open--;
      if (byAbort) aborted++;
    };
  }

  function waitForStop(signal: AbortSignal, ms = Infinity): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        pending.delete(done);
        resolve();
      };
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
      signal.addEventListener("abort", done, { once: true });
      pending.add(done);
    });
  }

  function stream(steps: Step[], req: Request, release: (byAbort: boolean) => void): Response {
    const stop = new AbortController();
    const onClientGone = () => {
      release(true);
      stop.abort();
    };
    req.signal.addEventListener("abort", onClientGone, { once: true });
    const finish = () => {
      req.signal.removeEventListener("abort", onClientGone);
      release(false);
    };
    let i = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let step = steps[i++];
        // A wait writes nothing: the step after it is this pull's (a pull that enqueues nothing is not called again).
        while (step?.op === "wait" && !stop.signal.aborted) {
          // Until the test lets it go, or the client leaves (the waiter then goes away with it).
          const released = new AbortController();
          await Promise.race([step.until(), waitForStop(AbortSignal.any([stop.signal, released.signal]))]);
          released.abort();
          step = steps[i++];
        }
        if (!step || stop.signal.aborted) {
          finish();
          if (!stop.signal.aborted) controller.close();
          return;
        }
        if (step.op === "write") {
          if (step.delayMs > 0) await waitForStop(stop.signal, step.delayMs);
          if (stop.signal.aborted) return;
          controller.enqueue(step.bytes);
          written++;
          return;
        }
        if (step.op === "hang") {
          await waitForStop(stop.signal);
          return;
        }
        if (step.op === "pause") {
          // Then the end (Bun does not pull again after a pull that enqueued nothing).
          await waitForStop(stop.signal, step.ms);
          finish();
          if (!stop.signal.aborted) controller.close();
          return;
        }
        // Give the client time to read what was sent: an RST can make the peer drop unread bytes.
        await waitForStop(stop.signal, 30);
        finish();
        // Erroring the body makes Bun abort the socket (RST). An `undefined` reason keeps Bun from logging it.
        controller.error(undefined);
      },
      cancel() {
        onClientGone();
      },
    });
    const headers: Record<string, string> = { ...(opts.streamHeaders ?? {}) };
    if (opts.contentType) headers["content-type"] = "text/event-stream";
    return new Response(body, { status: 200, headers });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Bun closes idle connections after 10 s by default, which would end a hang early and on the wrong side.
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
      const raw = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
      let body: any = null;
      if (raw) {
        try {
          body = JSON.parse(raw);
        } catch {
          body = raw;
        }
      }
      requests.push({ method: req.method, path, headers, body });

      if (path !== "/v1/models" && path !== "/v1/responses") {
        return json(404, { error: { message: `Unknown path: ${path}`, type: "invalid_request_error", param: null, code: null } });
      }
      const key = /^Bearer\s+(\S+)/i.exec(headers.authorization ?? "")?.[1];
      if (!key || (opts.apiKey !== undefined && key !== opts.apiKey)) return json(401, { detail: "Unauthorized" });

      if (path === "/v1/models") {
        return json(200, {
          object: "list",
          data: models.map((id) => ({ id, object: "model", created: 1767225600, owned_by: "fake-upstream" })),
        });
      }
      if (req.method !== "POST") return json(405, { detail: "Method Not Allowed" });
      if (!body || typeof body !== "object" || Array.isArray(body)) {
        return json(400, { error: { message: "We could not parse the JSON body of your request.", type: "invalid_request_error", param: null, code: null } });
      }
      const refusal = checkUpstreamQuirks(body, skip);
      if (refusal) return json(refusal.status, refusal.body);
      const unsupported = (opts.unsupportedParams ?? []).find((p) => body !== null && typeof body === "object" && Object.hasOwn(body, p));
      if (unsupported) return json(400, { detail: `Unsupported parameter: ${unsupported}` });
      if (opts.rejectUnknownModels && !models.includes(body.model)) {
        return json(400, { detail: `The '${body.model}' model is not supported.` });
      }

      const s: Scenario = typeof scenario === "function" ? scenario(body) : (scenario ?? { kind: "text", text: echoText(body) });
      if (s.kind === "status") return statusResponse(s);

      const release = track();
      if (s.kind === "hang-before-headers") {
        await waitForStop(req.signal);
        release(req.signal.aborted);
        // Only reached when the client gave up or the server is closing; nobody reads this.
        return new Response(null, { status: 504 });
      }
      const events = eventsFor(s, body, opts.fixedIds);
      const frames = encodeEventFrames(events, {
        crlf: opts.crlf,
        withComments: opts.comments,
        bareEventFrames: opts.bareEvents,
        done: opts.done,
      });
      // Noise frames (comments, bare events) ride on the frame they precede, so afterEvents still counts events.
      const padded = opts.done ? events.concat({ type: "[DONE]" }) : events;
      return stream(stepsFor(s, padded, frames, opts.crlf ? "\r\n" : "\n"), req, release);
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    port: server.port as number,
    requests,
    get open() {
      return open;
    },
    resetMaxOpen() {
      maxOpen = open;
    },
    get maxOpen() {
      return maxOpen;
    },
    get aborted() {
      return aborted;
    },
    get written() {
      return written;
    },
    setScenario(s) {
      scenario = s;
    },
    setModels(ids) {
      models = [...ids];
    },
    async close() {
      for (const done of [...pending]) done();
      await server.stop(true);
    },
  };
}

/**
 * A pool of two for the client tests: `upstream` (account `b`) answers as configured; `failing` (account `a`, tried
 * first) fails every request before its first content (response.created, then an `error` event), so each call either
 * fails over from it or, once it is taken out, goes straight to `b`. What a client sees must not change.
 */
export async function startPoolOfTwo(opts: FakeUpstreamOptions = {}): Promise<{
  upstream: FakeUpstream;
  failing: FakeUpstream;
  config: { upstreams: Awaited<ReturnType<typeof startFakeUpstreams>>["accounts"]; upstreamKey: string };
  close(): Promise<void>;
}> {
  const f = await startFakeUpstreams([
    // The same model list as the other: the pool's list is the union of both.
    { priority: 1, models: opts.models, scenario: { kind: "error-event", nested: true, code: "server_error", terminal: false } },
    { ...opts, priority: 2 },
  ]);
  return { upstream: f.upstreams[1]!, failing: f.upstreams[0]!, config: { upstreams: f.accounts, upstreamKey: "" }, close: f.close };
}
