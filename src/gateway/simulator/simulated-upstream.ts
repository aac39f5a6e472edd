/**
 * The demo's model provider: a real HTTP upstream (serve it with Bun.serve on loopback) that speaks the Responses
 * streaming protocol and refuses what the real upstream refuses, so `gantry demo` exercises the gateway's actual
 * upstream client and compatibility fixes rather than a shortcut. Replies are deterministic functions of the
 * request so a demo (or a test) can predict them.
 *
 * The quirk checks are exported because the integration tests' fake upstream must refuse exactly the same things.
 */

import type { JsonObject, ResponsesRequest, ResponsesStreamEvent } from "../wire/responses-types";
import { buildResponseEvents, encodeEventFrames, estimateTokens, type SimulatedCall } from "./events";
import { sampleFromSchema } from "./tool-arguments";

export const DEMO_MODELS = ["demo-mini", "demo-large", "gpt-5.4"];

/** Refusals of the real upstream, by name, so a test can switch off exactly the ones it needs. */
export type UpstreamQuirk =
  | "stream" // stream must be true
  | "store" // store:true is refused
  | "instructions" // the instructions key must be present, and not ""
  | "tool-shape" // tools and tool_choice must be flat ({type,name}), not Chat-nested
  | "system-role" // role "system" is not accepted in input
  | "null-content" // message content must not be null
  | "content-type" // assistant parts must be output_text, user/developer parts input_*
  | "unknown-function-call" // a function_call in input must name a tool in `tools`
  | "orphan-call-output" // a function_call_output needs an earlier function_call with its call_id
  | "stored-items"; // nothing is stored: an input item with an id, or an item_reference, names an unknown item

export const ALL_QUIRKS: readonly UpstreamQuirk[] = [
  "stored-items",
  "stream",
  "store",
  "instructions",
  "tool-shape",
  "system-role",
  "null-content",
  "content-type",
  "unknown-function-call",
  "orphan-call-output",
];

export interface UpstreamRefusal {
  status: number;
  body: unknown;
}

function invalid(message: string, param: string | null, code: string | null): UpstreamRefusal {
  return { status: 400, body: { error: { message, type: "invalid_request_error", param, code } } };
}

/** The input array as the upstream reads it: a bare string is one user message. */
export function inputItems(body: Partial<ResponsesRequest>): JsonObject[] {
  if (typeof body.input === "string") return [{ type: "message", role: "user", content: body.input }];
  return Array.isArray(body.input) ? body.input.filter((x) => x && typeof x === "object") : [];
}

function isMessage(item: JsonObject): boolean {
  return item.type === "message" || (item.type === undefined && typeof item.role === "string");
}

export function messageText(item: JsonObject): string {
  if (typeof item.content === "string") return item.content;
  if (!Array.isArray(item.content)) return "";
  return item.content
    .map((p: any) => (p && typeof p.text === "string" ? p.text : ""))
    .filter(Boolean)
    .join("\n");
}

export function lastUserText(body: Partial<ResponsesRequest>): string {
  const users = inputItems(body).filter((it) => isMessage(it) && it.role === "user");
  return users.length ? messageText(users[users.length - 1]) : "";
}

/** Rough prompt size, so usage moves with the request the way real billing does. */
export function estimateInputTokens(body: Partial<ResponsesRequest>): number {
  let chars = typeof body.instructions === "string" ? body.instructions.length : 0;
  for (const it of inputItems(body)) {
    if (isMessage(it)) chars += messageText(it).length;
    else if (it.type === "function_call") chars += String(it.name ?? "").length + String(it.arguments ?? "").length;
    else if (it.type === "function_call_output") chars += String(it.output ?? "").length;
  }
  if (Array.isArray(body.tools)) chars += JSON.stringify(body.tools).length;
  return Math.ceil(chars / 4);
}

function functionToolNames(body: Partial<ResponsesRequest>): string[] {
  if (!Array.isArray(body.tools)) return [];
  return body.tools.filter((t) => t?.type === "function" && typeof t.name === "string").map((t) => t.name as string);
}

/** The first refusal the real upstream would give for this body, or null if it would accept it. */
export function checkUpstreamQuirks(body: any, skip: ReadonlySet<UpstreamQuirk> = new Set()): UpstreamRefusal | null {
  const on = (q: UpstreamQuirk) => !skip.has(q);
  if (on("stream") && body.stream !== true) return { status: 400, body: { detail: "Stream must be set to true" } };
  if (on("stored-items") && body.previous_response_id != null) return { status: 400, body: { detail: "Unsupported parameter: previous_response_id" } };
  if (on("store") && body.store === true) return { status: 400, body: { detail: "Store must be set to false" } };
  if (on("instructions") && (typeof body.instructions !== "string" || body.instructions === "")) {
    return { status: 400, body: { detail: "Instructions are required" } };
  }
  if (on("tool-shape")) {
    const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
    for (let i = 0; i < tools.length; i++) {
      if (tools[i]?.type === "function" && typeof tools[i].name !== "string") {
        return invalid(`Missing required parameter: 'tools[${i}].name'.`, `tools[${i}].name`, "missing_required_parameter");
      }
    }
    const choice = body.tool_choice;
    if (choice && typeof choice === "object" && choice.type === "function") {
      if (typeof choice.name !== "string") {
        return invalid("Missing required parameter: 'tool_choice.name'.", "tool_choice.name", "missing_required_parameter");
      }
      if (!functionToolNames(body).includes(choice.name)) {
        return invalid(`Tool choice '${choice.name}' not found in 'tools' parameter.`, "tool_choice", null);
      }
    }
  }
  if (!Array.isArray(body.input)) return null;
  const toolNames = new Set(functionToolNames(body));
  const callIds = new Set<string>();
  for (let i = 0; i < body.input.length; i++) {
    const item = body.input[i] ?? {};
    if (on("stored-items") && typeof item.id === "string") {
      // The real stream-only backend's words: it keeps no items, so an id can only name one it does not have.
      return invalid(
        `Item with id '${quote(item.id, 64)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        "input",
        null,
      );
    }
    if (isMessage(item)) {
      if (on("system-role") && item.role === "system") {
        return invalid(
          "Invalid value: 'system'. Supported values are: 'assistant', 'developer', and 'user'.",
          `input[${i}].role`,
          "invalid_value",
        );
      }
      if (on("null-content") && item.content === null) {
        return invalid(
          `Invalid type for 'input[${i}].content': expected an array of objects or string, but got null instead.`,
          `input[${i}].content`,
          "invalid_type",
        );
      }
      if (on("content-type") && Array.isArray(item.content)) {
        for (let j = 0; j < item.content.length; j++) {
          const type = item.content[j]?.type;
          if (item.role === "assistant" && type !== "output_text" && type !== "refusal") {
            return invalid(
              `Invalid value: '${type}'. Supported values are: 'output_text' and 'refusal'.`,
              `input[${i}].content[${j}]`,
              "invalid_value",
            );
          }
          if (item.role !== "assistant" && typeof type === "string" && !type.startsWith("input_")) {
            return invalid(
              `Invalid value: '${type}'. Supported values are: 'input_text', 'input_image', and 'input_file'.`,
              `input[${i}].content[${j}]`,
              "invalid_value",
            );
          }
        }
      }
    } else if (item.type === "function_call") {
      if (on("unknown-function-call") && !toolNames.has(item.name)) {
        return invalid(
          `Invalid input: function_call '${item.name}' at input[${i}] does not match any function in 'tools'.`,
          `input[${i}].name`,
          "invalid_value",
        );
      }
      callIds.add(item.call_id);
    } else if (item.type === "function_call_output") {
      if (on("orphan-call-output") && !callIds.has(item.call_id)) {
        return invalid(`No tool call found for function call output with call_id ${item.call_id}.`, "input", null);
      }
    }
  }
  return null;
}

function quote(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export interface DemoReply {
  text?: string;
  calls?: SimulatedCall[];
  reasoning?: string;
  reasoningTokens?: number;
  encrypted?: boolean;
}

const EFFORT_FACTOR: Record<string, number> = { low: 2, medium: 4, high: 8, xhigh: 16 };

/** What the demo model answers: a pure function of the request body. */
export function planDemoReply(body: Partial<ResponsesRequest>): DemoReply {
  const items = inputItems(body);
  const last = items[items.length - 1];
  const userText = lastUserText(body);
  const reply: DemoReply = {};

  const effort = body.reasoning?.effort;
  if (effort && EFFORT_FACTOR[effort]) {
    const summary = body.reasoning?.summary && body.reasoning.summary !== "none";
    reply.reasoning = summary ? `Working out how to answer "${quote(userText, 60)}" at ${effort} effort.` : "";
    // Hidden reasoning costs more than its summary shows; scale by effort so xhigh is visibly pricier.
    reply.reasoningTokens = (estimateTokens(userText) + 8) * EFFORT_FACTOR[effort];
    reply.encrypted = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
  }

  if (last?.type === "function_call_output") {
    const call = items.find((it) => it.type === "function_call" && it.call_id === last.call_id);
    const name = call?.name ?? "tool";
    reply.text = `Gantry demo model here. The ${name} tool returned ${quote(String(last.output ?? ""), 200)}${
      userText ? `, which answers "${quote(userText, 80)}"` : ""
    }.`;
    return reply;
  }

  const tools = (Array.isArray(body.tools) ? body.tools : []).filter((t) => t?.type === "function" && t.name);
  const choice = body.tool_choice;
  if (tools.length && choice !== "none" && last && isMessage(last) && last.role === "user") {
    const named = choice && typeof choice === "object" ? (choice as JsonObject).name : undefined;
    const tool = tools.find((t) => t.name === named) ?? pickTool(tools, userText, choice === "required");
    if (tool) {
      const args = sampleFromSchema(tool.parameters ?? { type: "object", properties: {} }, userText);
      reply.calls = [{ name: tool.name, arguments: JSON.stringify(args) }];
      return reply;
    }
  }

  reply.text =
    `Gantry demo model here. You said: "${quote(userText) || "(nothing)"}". ` +
    "This reply comes from the built-in simulated upstream, streamed in small pieces so you can watch it arrive.";
  return reply;
}

/**
 * The tool the demo model calls: with a few tools offered (an app's own), the first, as a model asked about the
 * weather would; with many (an agent such as Claude Code offers two dozen), only one the caller names, or the first
 * when a call is required: otherwise an agent asked "Hello" would be sent into its own tools, call after call.
 */
const FEW_TOOLS = 4;

function pickTool<T extends { name?: unknown }>(tools: T[], userText: string, required: boolean): T | undefined {
  if (tools.length <= FEW_TOOLS || required) return tools.find((t) => mentions(userText, String(t.name))) ?? tools[0];
  return tools.find((t) => mentions(userText, String(t.name)));
}

function mentions(text: string, name: string): boolean {
  return new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i").test(text);
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

function notFound(message: string, status = 404): Response {
  return json(status, { error: { message, type: "invalid_request_error", param: null, code: null } });
}

/** Resolves after ms, or early when the client goes away, so an aborted stream stops promptly. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Streams frames, pausing before each delta event so the reply visibly trickles in. */
export function streamFrames(
  events: ResponsesStreamEvent[],
  frames: string[],
  delayMs: number,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i >= frames.length || signal.aborted) {
        controller.close();
        return;
      }
      if (events[i]?.type.endsWith(".delta")) await sleep(delayMs, signal);
      if (signal.aborted) {
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(frames[i++]));
    },
  });
}

export interface SimulatedUpstreamOptions {
  /** Pause before each delta event; default 15 ms, so a ~20-delta reply takes about a third of a second. */
  deltaDelayMs?: number;
  models?: string[];
  /** Refusals to switch off; by default every quirk of the real upstream is enforced. */
  lenient?: UpstreamQuirk[];
}

export function createSimulatedUpstream(opts: SimulatedUpstreamOptions = {}): (req: Request) => Promise<Response> {
  const models = opts.models ?? DEMO_MODELS;
  const delayMs = opts.deltaDelayMs ?? 15;
  const skip = new Set(opts.lenient ?? []);
  const created = 1767225600; // fixed, so the model list is stable across runs

  return async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname.replace(/\/+$/, "");
    if (path !== "/v1/models" && path !== "/v1/responses") return notFound(`Unknown path: ${path}`);
    if (!/^Bearer\s+\S+/i.test(req.headers.get("authorization") ?? "")) {
      return json(401, { detail: "Unauthorized" });
    }

    if (path === "/v1/models") {
      if (req.method !== "GET") return notFound(`Method ${req.method} not allowed`, 405);
      return json(200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", created, owned_by: "gantry-demo" })),
      });
    }

    if (req.method !== "POST") return notFound(`Method ${req.method} not allowed`, 405);
    let body: any;
    try {
      body = await req.json();
    } catch {
      return notFound("We could not parse the JSON body of your request.", 400);
    }
    if (!body || typeof body !== "object" || Array.isArray(body)) {
      return notFound("The request body must be a JSON object.", 400);
    }
    const refusal = checkUpstreamQuirks(body, skip);
    if (refusal) return json(refusal.status, refusal.body);
    if (typeof body.model !== "string" || !models.includes(body.model)) {
      return json(400, { detail: `The '${body.model}' model is not supported.` });
    }

    const reply = planDemoReply(body);
    const inputTokens = estimateInputTokens(body);
    const events = buildResponseEvents({
      model: body.model,
      createdAt: Math.floor(Date.now() / 1000),
      text: reply.text,
      deltas: reply.text ? 20 : undefined,
      calls: reply.calls,
      reasoning: reply.reasoning,
      encryptedReasoning: reply.encrypted ? `gAAAAB${Buffer.from(`gantry-demo:${reply.reasoning ?? ""}`).toString("base64")}` : undefined,
      usage: {
        input_tokens: inputTokens,
        ...(reply.reasoningTokens !== undefined ? { output_tokens_details: { reasoning_tokens: reply.reasoningTokens } } : {}),
      },
      request: body,
    });
    const frames = encodeEventFrames(events);
    return new Response(streamFrames(events, frames, delayMs, req.signal), {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-request-id": `req_${crypto.randomUUID().replace(/-/g, "")}`,
      },
    });
  };
}
