/**
 * The gateway's compatibility rewrites of a Responses request (skipped in raw mode; the caller decides).
 * Each rule exists because the upstream rejects, or handles badly, what clients commonly send (the spec's
 * "Normalisation rules"; research notes gateway-notes.md §1 and §3).
 *
 * The input is never mutated. Unchanged nested values are shared with the input, not copied.
 */

import { AppError } from "../../errors";
import type { JsonObject, ResponsesRequest } from "../wire/responses-types";
import { checkResponsesInput, checkResponsesTools } from "./request-checks";

export interface NormalizeOptions {
  defaultInstructions: string;
  modelOverrides: Record<string, { reasoningEffort?: string }>;
  stripFields?: string[];
}

const ENCRYPTED_REASONING = "reasoning.encrypted_content";
const TEXT_PART_TYPES = new Set(["text", "input_text", "output_text"]);
/**
 * Text part type per role (system is already developer by then). The upstream rejects `input_text` in
 * assistant history ("Invalid value: 'input_text'") and `output_text` in the other roles.
 */
const TEXT_TYPE_OF_ROLE: Record<string, string> = {
  user: "input_text",
  developer: "input_text",
  assistant: "output_text",
};

/**
 * `inputFrom: "chat"`: the input was made by the chat translation, which checks every message and emits items already
 * in the upstream's shape (developer for system, text part types per role, no ids, no null content): it is neither
 * checked nor walked again. Everything else about the request is normalised the same way.
 */
export function normalizeResponsesRequest(body: ResponsesRequest, options: NormalizeOptions, inputFrom: "caller" | "chat" = "caller"): ResponsesRequest {
  if (inputFrom === "caller") {
    checkResponsesInput(body.input);
    checkResponsesTools(body.tools);
  }
  const out: ResponsesRequest = { ...body };

  if (inputFrom === "chat") {
    // Already normalised by the translation.
  } else if (typeof body.input === "string") {
    out.input = [{ type: "message", role: "user", content: [{ type: "input_text", text: body.input }] }];
  } else if (Array.isArray(body.input)) {
    // A message whose content is null carries nothing, and the upstream refuses it ("expected an array of
    // objects or string, but got null"); an empty parts array is refused too, so the message is dropped.
    out.input = body.input.filter((it: JsonObject) => !isNullMessage(it)).map(normalizeInputItem);
  }

  // An empty or blank value says nothing, and the upstream refuses "" ("Instructions are required"; LlamaIndex's
  // OpenAIResponses always sends one): it counts as absent, so the default applies.
  if (body.instructions == null || isBlank(body.instructions)) out.instructions = options.defaultInstructions;
  // The upstream takes only a string here; anything else would come back as an upstream 400 the caller cannot read.
  else if (typeof body.instructions !== "string") {
    throw new AppError("invalid_request", "'instructions' must be a string.", { param: "instructions" });
  }

  // The upstream runs with store:false, so reasoning can only carry over between turns in encrypted form.
  const include = Array.isArray(body.include) ? body.include : [];
  out.include = [...new Set([...include, ENCRYPTED_REASONING])];

  const rebuilt = rebuildMissingTools(Array.isArray(out.input) ? out.input : [], body.tools);
  if (rebuilt.length > 0) out.tools = [...(Array.isArray(body.tools) ? body.tools : []), ...rebuilt];

  // The upstream only streams ("Stream must be set to true"); non-stream callers get an aggregated reply.
  out.stream = true;
  // The upstream keeps nothing ("Store must be set to false", and the API's default is true): always say so.
  // The gateway keeps nothing either, so a caller's store:true could never have been honoured.
  out.store = false;

  const override =
    typeof body.model === "string" && Object.hasOwn(options.modelOverrides, body.model) ? options.modelOverrides[body.model] : undefined;
  if (override?.reasoningEffort !== undefined) {
    const reasoning = body.reasoning !== null && typeof body.reasoning === "object" ? body.reasoning : {};
    out.reasoning = { ...reasoning, effort: override.reasoningEffort };
  }

  // Last, so a stripped field stays stripped even if a rule above set it.
  for (const field of options.stripFields ?? []) delete out[field];

  return out;
}

/** A string of nothing but white space (or nothing at all). Stops at the first other character: no copy of long instructions. */
function isBlank(v: unknown): boolean {
  return typeof v === "string" && !/\S/.test(v);
}

function isMessage(item: JsonObject): boolean {
  return item.type === "message" || (item.type === undefined && typeof item.role === "string");
}

function isNullMessage(item: JsonObject): boolean {
  return item !== null && typeof item === "object" && isMessage(item) && item.content === null;
}

function normalizeInputItem(item: JsonObject): JsonObject {
  if (item === null || typeof item !== "object") return item;
  // The upstream stores nothing, so an item id names an item it does not have ("Item with id … not found"): replayed
  // output items (messages, reasoning, function calls) go without theirs. A reference is nothing but its id.
  const it = typeof item.id === "string" && item.type !== "item_reference" ? withoutId(item) : item;
  if (isMessage(it)) return normalizeMessage(it);
  if (it.type === "function_call_output" && it.output !== undefined && typeof it.output !== "string") {
    // The Responses API takes a string or a list of input content parts (text, image, file); a list of parts
    // is kept, with chat-style or output-typed text parts retyped. Anything else becomes its JSON text.
    if (isContentPartList(it.output)) {
      const output = it.output.map((p) => (TEXT_PART_TYPES.has(p.type) && p.type !== "input_text" ? { ...p, type: "input_text" } : p));
      return { ...it, output };
    }
    return { ...it, output: JSON.stringify(it.output) };
  }
  return it;
}

function withoutId(item: JsonObject): JsonObject {
  const { id: _id, ...rest } = item;
  return rest;
}

const OUTPUT_PART_TYPES = new Set(["input_text", "input_image", "input_file", "text", "output_text"]);

/** A non-empty list of typed content parts (text parts with their text), as a tool may return. */
function isContentPartList(v: unknown): v is JsonObject[] {
  if (!Array.isArray(v) || v.length === 0) return false;
  return v.every((p: JsonObject) => {
    if (p === null || typeof p !== "object" || !OUTPUT_PART_TYPES.has(p.type)) return false;
    return TEXT_PART_TYPES.has(p.type) ? typeof p.text === "string" : true;
  });
}

function normalizeMessage(msg: JsonObject): JsonObject {
  const role = msg.role === "system" ? "developer" : msg.role;
  // Own keys only: a role such as "constructor" or "hasOwnProperty" must not find Object.prototype members.
  const textType = typeof role === "string" && Object.hasOwn(TEXT_TYPE_OF_ROLE, role) ? TEXT_TYPE_OF_ROLE[role] : undefined;
  // Unknown role: no text type to apply, so the content is left as the client sent it.
  if (textType === undefined) return role === msg.role ? msg : { ...msg, role };

  let content = msg.content;
  if (typeof content === "string") {
    content = [{ type: textType, text: content }];
  } else if (Array.isArray(content)) {
    content = content.map((part) =>
      part !== null && typeof part === "object" && TEXT_PART_TYPES.has(part.type) && part.type !== textType
        ? { ...part, type: textType }
        : part,
    );
  }
  return { ...msg, role, content };
}

function toolName(tool: unknown): string | undefined {
  if (tool === null || typeof tool !== "object") return undefined;
  const t = tool as JsonObject;
  if (typeof t.name === "string") return t.name;
  // A Chat-shaped definition ({function:{name}}) still defines the name; rebuilding it would duplicate it.
  if (t.function !== null && typeof t.function === "object" && typeof t.function.name === "string") {
    return t.function.name;
  }
  return undefined;
}

/**
 * History that holds a function_call for a tool the request does not define makes the model improvise
 * (e.g. XML-like tool text). A definition is rebuilt for each such name, with a schema loose enough to accept
 * every arguments object the history shows.
 */
function rebuildMissingTools(input: JsonObject[], tools: unknown): JsonObject[] {
  const defined = new Set<string>();
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      const name = toolName(tool);
      if (name !== undefined) defined.add(name);
    }
  }

  const samples = new Map<string, JsonObject[]>();
  for (const it of input) {
    if (it === null || typeof it !== "object") continue;
    if (it.type !== "function_call" || typeof it.name !== "string" || it.name === "" || defined.has(it.name)) continue;
    let list = samples.get(it.name);
    if (!list) {
      list = [];
      samples.set(it.name, list);
    }
    const args = parseArguments(it.arguments);
    if (args !== undefined) list.push(args);
  }

  const rebuilt: JsonObject[] = [];
  for (const [name, objects] of samples) {
    rebuilt.push({
      type: "function",
      name,
      description: `The function "${name}", as called earlier in this conversation.`,
      parameters: objectSchema(objects, 0),
    });
  }
  return rebuilt;
}

/**
 * The arguments as a JSON object, or undefined when they are not one (empty, unparseable or not an object):
 * such a call says nothing about the parameters, so it adds nothing to the schema.
 */
function parseArguments(args: unknown): JsonObject | undefined {
  if (isPlainObject(args)) return args;
  if (typeof args !== "string") return undefined;
  try {
    const parsed = JSON.parse(args);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isPlainObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// Deeper values are described only by their type: enough to accept them, and no pathological recursion.
const MAX_SCHEMA_DEPTH = 6;

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  const t = typeof v;
  return t === "number" || t === "string" || t === "boolean" ? t : "object";
}

/** Object schema that accepts every given object: no `required`, extra properties allowed. */
function objectSchema(objects: JsonObject[], depth: number): JsonObject {
  const valuesByKey = new Map<string, unknown[]>();
  for (const obj of objects) {
    for (const [key, value] of Object.entries(obj)) {
      let list = valuesByKey.get(key);
      if (!list) {
        list = [];
        valuesByKey.set(key, list);
      }
      list.push(value);
    }
  }
  const properties: JsonObject = {};
  for (const [key, values] of valuesByKey) properties[key] = valueSchema(values, depth + 1);
  return { type: "object", properties, additionalProperties: true };
}

/** Schema that accepts every given value: the union of their JSON types, refined for objects and arrays. */
function valueSchema(values: unknown[], depth: number): JsonObject {
  const types: string[] = [];
  for (const v of values) {
    const t = jsonType(v);
    if (!types.includes(t)) types.push(t);
  }
  const schema: JsonObject = { type: types.length === 1 ? types[0] : types };
  if (depth >= MAX_SCHEMA_DEPTH) return schema;

  if (types.includes("object")) {
    Object.assign(schema, objectSchema(values.filter(isPlainObject), depth), { type: schema.type });
  }
  if (types.includes("array")) {
    const elements = values.filter(Array.isArray).flat();
    if (elements.length > 0) schema.items = valueSchema(elements, depth + 1);
  }
  return schema;
}
