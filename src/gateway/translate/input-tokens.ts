/**
 * The input tokens of a Responses request, counted as the upstream's model family counts them (pure): what
 * `POST /v1/messages/count_tokens` answers. The text is counted by the family's own tokenizer, which the caller
 * hands in (it is megabytes of tables, loaded on first use: gateway/upstream/tokenizers.ts); the framing around
 * it — a few tokens per message for its role and delimiters, the function definitions rendered as the model reads
 * them, the tokens that prime the reply — is gpt-tokenizer's rendering of OpenAI's chat format, which reproduces
 * the counts OpenAI's API reports (tests/fixtures/token-counts).
 *
 * The request is read as the upstream gets it: `instructions` first as a system message, then each input item as
 * the message it becomes. What a tokenizer cannot see is estimated: an image at OpenAI's documented cost of a
 * 1024-pixel square (765 tokens; 85 at `detail: "low"`), a file by its size, a structured-output schema by its
 * JSON text. Reasoning items a client sends back are not counted (they are encrypted, and the upstream drops
 * most of them).
 */
import {
  computeChatCompletionTokenCount,
  type ChatCompletionFunctionDefinition,
  type ChatCompletionFunctionProperty,
  type ChatMessage,
} from "gpt-tokenizer/functionCalling";
import type { JsonObject, ResponsesRequest } from "../wire/responses-types";
import { tokensOfBytes } from "../wire/token-counts";

/** The tokenizers Gantry carries: o200k for every current OpenAI model, cl100k for GPT-4 and GPT-3.5. */
export type TokenizerFamily = "o200k_base" | "cl100k_base";

/** Counts the tokens of a text (special-token markers in it count as plain text, as the upstream reads them). */
export type CountText = (text: string) => number;

/** GPT-4 (but not GPT-4o, GPT-4.1 or GPT-4.5) and GPT-3.5 use cl100k; everything newer, and names Gantry does not know, o200k. */
export function tokenizerFamilyOf(model: string): TokenizerFamily {
  return /^(gpt-4(?![o.])|gpt-3\.5|gpt-35)/i.test(model) ? "cl100k_base" : "o200k_base";
}

/** OpenAI's documented cost of an image: a 1024×1024 one at high detail, and any image at low detail. */
export const IMAGE_TOKENS = 765;
export const LOW_DETAIL_IMAGE_TOKENS = 85;

/** Schemas nest at most this deep here (the body's JSON is bounded at 128 levels already). */
const MAX_SCHEMA_DEPTH = 32;

/**
 * What a request's count is made of: the framing, which depends only on the request's shape, and the texts the
 * tokenizer counts. The count is linear in the texts' counts (the rendering adds each text's tokens to a sum), so a
 * shell may count the texts as it likes — in slices, between other work — and add the framing.
 */
export interface InputTokenPlan {
  fixed: number;
  texts: string[];
}

export function planInputTokens(request: ResponsesRequest): InputTokenPlan {
  const messages: ChatMessage[] = [];
  let extra = 0;
  if (typeof request.instructions === "string" && request.instructions !== "") messages.push({ role: "system", content: request.instructions });
  const input = request.input;
  if (typeof input === "string") messages.push({ role: "user", content: input });
  else if (Array.isArray(input)) {
    for (const item of input) {
      const read = itemMessage(item);
      if (read === null) continue;
      messages.push(read.message);
      extra += read.extra;
    }
  }
  const functions = functionsOf(request.tools);
  const texts: string[] = [];
  // Every text the rendering counts is recorded and counted as nothing: what is left is the framing.
  const record: CountText = (text) => (texts.push(text), 0);
  const fixed = computeChatCompletionTokenCount(
    { messages, functions: functions.length > 0 ? functions : undefined, function_call: functionChoiceOf(request.tool_choice) },
    record,
  );
  const schema = schemaText(request.text);
  if (schema !== null) texts.push(schema);
  return { fixed: fixed + extra, texts };
}

/** The whole count at once, for a caller that has the tokenizer at hand. */
export function countInputTokens(request: ResponsesRequest, countText: CountText): number {
  const plan = planInputTokens(request);
  return plan.texts.reduce((sum, text) => sum + countText(text), plan.fixed);
}

/**
 * A text cut into pieces of at most `max` characters, each cut made before a space where there is one in the
 * second half of the piece (the tokenizer starts a new token at a space, so such a cut changes no count), else
 * where the piece is full (a run with no space: a cut there may add a token).
 */
export function textSlices(text: string, max: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (text.length - at > max) {
    let end = at + max;
    const space = text.lastIndexOf(" ", end);
    if (space > at + max / 2) end = space;
    // Never between the two halves of a surrogate pair.
    else if (/[\uD800-\uDBFF]/.test(text[end - 1])) end--;
    out.push(text.slice(at, end));
    at = end;
  }
  out.push(text.slice(at));
  return out;
}

/** One input item as the message the model reads, and the tokens of what it holds that no tokenizer sees. */
function itemMessage(item: unknown): { message: ChatMessage; extra: number } | null {
  if (item === null || typeof item !== "object") return null;
  const it = item as JsonObject;
  switch (it.type ?? "message") {
    case "message": {
      const { text, extra } = contentOf(it.content);
      return { message: { role: typeof it.role === "string" ? it.role : "user", content: text }, extra };
    }
    case "function_call":
      return { message: { role: "assistant", content: "", function_call: { name: stringOr(it.name), arguments: stringOr(it.arguments) } }, extra: 0 };
    case "custom_tool_call":
      return { message: { role: "assistant", content: "", function_call: { name: stringOr(it.name), arguments: stringOr(it.input) } }, extra: 0 };
    case "function_call_output":
    case "custom_tool_call_output": {
      const { text, extra } = typeof it.output === "string" ? { text: it.output, extra: 0 } : contentOf(it.output);
      return { message: { role: "tool", content: text }, extra };
    }
    default:
      return null;
  }
}

function stringOr(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** A message's content: its text parts joined, and the estimate of its images and files. */
function contentOf(content: unknown): { text: string; extra: number } {
  if (typeof content === "string") return { text: content, extra: 0 };
  if (!Array.isArray(content)) return { text: "", extra: 0 };
  let text = "";
  let extra = 0;
  for (const part of content) {
    if (part === null || typeof part !== "object") continue;
    const p = part as JsonObject;
    if (typeof p.text === "string") text += p.text;
    else if (p.type === "input_image") extra += p.detail === "low" ? LOW_DETAIL_IMAGE_TOKENS : IMAGE_TOKENS;
    else if (p.type === "input_file") extra += fileTokens(p);
  }
  return { text, extra };
}

/** A file the tokenizer cannot read (a PDF's pages): estimated from its decoded size. */
function fileTokens(part: JsonObject): number {
  const data = typeof part.file_data === "string" ? part.file_data : "";
  const base64 = data.slice(data.indexOf(",") + 1);
  return tokensOfBytes(Math.floor((base64.length * 3) / 4));
}

function functionsOf(tools: unknown): ChatCompletionFunctionDefinition[] {
  if (!Array.isArray(tools)) return [];
  const out: ChatCompletionFunctionDefinition[] = [];
  for (const t of tools) {
    if (t === null || typeof t !== "object" || (t as JsonObject).type !== "function" || typeof (t as JsonObject).name !== "string") continue;
    const tool = t as JsonObject;
    const parameters = schemaOf(tool.parameters, 0);
    out.push({
      name: tool.name,
      ...(typeof tool.description === "string" && tool.description !== "" ? { description: tool.description } : {}),
      ...(parameters?.type === "object" ? { parameters } : {}),
    });
  }
  return out;
}

/**
 * The part of a JSON schema the rendering reads, checked: a caller's schema may hold anything (a `required` that
 * is not a list, a property that is not an object), and counting must not fail on it where the upstream would
 * only refuse it.
 */
function schemaOf(value: unknown, depth: number): any {
  if (value === null || typeof value !== "object" || Array.isArray(value) || depth > MAX_SCHEMA_DEPTH) return undefined;
  const v = value as JsonObject;
  const out: JsonObject = {};
  if (typeof v.type === "string") out.type = v.type;
  if (typeof v.description === "string" && v.description !== "") out.description = v.description;
  if (Array.isArray(v.enum)) out.enum = v.enum.filter((e: unknown) => typeof e === "string" || typeof e === "number");
  if (Array.isArray(v.required)) out.required = v.required.filter((r: unknown) => typeof r === "string");
  const items = schemaOf(v.items, depth + 1);
  if (items) out.items = items;
  if (v.properties !== null && typeof v.properties === "object" && !Array.isArray(v.properties)) {
    // No prototype: a property named `__proto__` is a name like any other.
    const properties: Record<string, ChatCompletionFunctionProperty> = Object.create(null);
    for (const [name, p] of Object.entries(v.properties)) properties[name] = schemaOf(p, depth + 1) ?? ({} as ChatCompletionFunctionProperty);
    out.properties = properties;
  }
  return out;
}

function functionChoiceOf(choice: unknown): "none" | { name: string } | undefined {
  if (choice === "none") return "none";
  if (choice !== null && typeof choice === "object" && (choice as JsonObject).type === "function" && typeof (choice as JsonObject).name === "string") {
    return { name: (choice as JsonObject).name };
  }
  return undefined;
}

/** A structured-output schema (`text.format`), which the model reads too: estimated by its JSON text. */
function schemaText(text: unknown): string | null {
  const format = text !== null && typeof text === "object" ? (text as JsonObject).format : undefined;
  if (format === null || typeof format !== "object" || format.type !== "json_schema" || format.schema === undefined) return null;
  return JSON.stringify(format.schema);
}
