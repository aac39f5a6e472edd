/**
 * Anthropic `messages` (and `system`) -> Responses `instructions` and `input` items, already in the upstream's shape
 * (text part types per role, no ids), so normalisation does not walk them again.
 *
 * Blocks keep their order: a user turn that answers tool calls and then says something becomes its
 * function_call_output items followed by a user message; an assistant turn with text, thinking and tool calls becomes
 * a message, reasoning items and function_call items. Empty text is dropped (the upstream refuses empty parts, and a
 * turn left with nothing is dropped with it). Thinking is kept only when it carries Gantry's signature.
 */
import type { JsonObject } from "../../wire/responses-types";
import { invalid, isObject } from "../request-checks";
import { encryptedContentOf } from "./thinking-signature";

export interface MessagesInput {
  /** The system prompt: `system`, then every `role: "system"` turn, in order; undefined when there is none. */
  instructions: string | undefined;
  input: JsonObject[];
}

/** Words the function output starts with when the tool reported an error (`is_error`): the model has no other way to know. */
export const TOOL_ERROR_PREFIX = "Error: the tool reported a failure.\n";

export function messagesToInput(system: unknown, messages: unknown): MessagesInput {
  const instructions: string[] = [];
  const systemText = systemToText(system, "system");
  if (systemText !== "") instructions.push(systemText);
  if (!Array.isArray(messages) || messages.length === 0) invalid("messages: at least one message is required.", "messages");

  const input: JsonObject[] = [];
  // Tool-use ids said by assistant turns so far: a tool_result must answer one of them.
  const toolUseIds = new Set<string>();
  messages.forEach((message: unknown, i: number) => {
    const at = `messages.${i}`;
    if (!isObject(message)) invalid(`${at}: must be an object.`, at);
    const role = message.role;
    if (role === "system") {
      // Not in the documented API, but Claude Code sends one: its text joins the system prompt.
      const text = systemToText(message.content, `${at}.content`);
      if (text !== "") instructions.push(text);
      return;
    }
    if (role !== "user" && role !== "assistant") invalid(`${at}.role: must be "user" or "assistant".`, `${at}.role`);
    const blocks = contentBlocks(message.content, `${at}.content`);
    if (role === "user") userItems(blocks, at, toolUseIds, input);
    else assistantItems(blocks, at, toolUseIds, input);
  });
  return { instructions: instructions.length > 0 ? instructions.join("\n\n") : undefined, input };
}

/** `system` (or a system turn's content): a string or text blocks, joined. */
function systemToText(system: unknown, at: string): string {
  if (system == null) return "";
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) invalid(`${at}: must be a string or an array of text blocks.`, at);
  const texts = system.map((block: unknown, i: number) => {
    if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") invalid(`${at}.${i}: must be a text block.`, `${at}.${i}`);
    return block.text;
  });
  return texts.filter((t) => t !== "").join("\n\n");
}

function contentBlocks(content: unknown, at: string): JsonObject[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) invalid(`${at}: must be a string or an array of content blocks.`, at);
  return content.map((block: unknown, j: number) => {
    if (!isObject(block) || typeof block.type !== "string") invalid(`${at}.${j}: must be a content block with a type.`, `${at}.${j}`);
    return block;
  });
}

/** Consecutive text, image and document blocks make one message item; anything else ends it. */
class MessageParts {
  private parts: JsonObject[] = [];
  constructor(
    private readonly role: "user" | "assistant",
    private readonly out: JsonObject[],
  ) {}
  add(part: JsonObject): void {
    this.parts.push(part);
  }
  flush(): void {
    if (this.parts.length === 0) return;
    this.out.push({ type: "message", role: this.role, content: this.parts });
    this.parts = [];
  }
}

function userItems(blocks: JsonObject[], at: string, toolUseIds: ReadonlySet<string>, out: JsonObject[]): void {
  const parts = new MessageParts("user", out);
  blocks.forEach((block, j) => {
    const bat = `${at}.content.${j}`;
    switch (block.type) {
      case "text":
        if (typeof block.text !== "string") invalid(`${bat}.text: must be a string.`, `${bat}.text`);
        if (block.text !== "") parts.add({ type: "input_text", text: block.text });
        return;
      case "image":
        parts.add(imagePart(block, bat));
        return;
      case "document":
        for (const p of documentParts(block, bat)) parts.add(p);
        return;
      case "tool_result":
        parts.flush();
        out.push(toolResultItem(block, bat, toolUseIds));
        return;
      case "thinking":
      case "redacted_thinking":
        // Only an assistant's own turns hold thinking; in a user turn it says nothing the upstream can use.
        return;
      default:
        invalid(`${bat}.type: "${String(block.type).slice(0, 64)}" is not a content block Gantry can send upstream.`, `${bat}.type`);
    }
  });
  parts.flush();
}

function assistantItems(blocks: JsonObject[], at: string, toolUseIds: Set<string>, out: JsonObject[]): void {
  const parts = new MessageParts("assistant", out);
  blocks.forEach((block, j) => {
    const bat = `${at}.content.${j}`;
    switch (block.type) {
      case "text":
        if (typeof block.text !== "string") invalid(`${bat}.text: must be a string.`, `${bat}.text`);
        if (block.text !== "") parts.add({ type: "output_text", text: block.text });
        return;
      case "tool_use": {
        if (typeof block.id !== "string" || block.id === "") invalid(`${bat}.id: must be a non-empty string.`, `${bat}.id`);
        if (typeof block.name !== "string" || block.name === "") invalid(`${bat}.name: must be a non-empty string.`, `${bat}.name`);
        if (block.input !== undefined && !isObject(block.input)) invalid(`${bat}.input: must be an object.`, `${bat}.input`);
        parts.flush();
        toolUseIds.add(block.id);
        out.push({ type: "function_call", call_id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
        return;
      }
      case "thinking":
      case "redacted_thinking": {
        const item = reasoningItem(block, bat);
        if (item === null) return;
        parts.flush();
        out.push(item);
        return;
      }
      default:
        invalid(`${bat}.type: "${String(block.type).slice(0, 64)}" is not a content block an assistant turn can hold here.`, `${bat}.type`);
    }
  });
  parts.flush();
}

/** A thinking block Gantry signed goes back as the upstream's reasoning item; any other is dropped. */
function reasoningItem(block: JsonObject, at: string): JsonObject | null {
  if (block.type === "thinking") {
    if (typeof block.thinking !== "string") invalid(`${at}.thinking: must be a string.`, `${at}.thinking`);
    const encrypted = encryptedContentOf(block.signature);
    if (encrypted === null) return null;
    const summary = block.thinking === "" ? [] : [{ type: "summary_text", text: block.thinking }];
    return { type: "reasoning", summary, encrypted_content: encrypted };
  }
  if (typeof block.data !== "string") invalid(`${at}.data: must be a string.`, `${at}.data`);
  const encrypted = encryptedContentOf(block.data);
  return encrypted === null ? null : { type: "reasoning", summary: [], encrypted_content: encrypted };
}

function imagePart(block: JsonObject, at: string): JsonObject {
  const source = block.source;
  if (!isObject(source)) invalid(`${at}.source: must be an object.`, `${at}.source`);
  if (source.type === "base64") {
    if (typeof source.media_type !== "string" || !/^image\/[a-z0-9.+-]+$/i.test(source.media_type)) {
      invalid(`${at}.source.media_type: must be an image media type.`, `${at}.source.media_type`);
    }
    if (typeof source.data !== "string" || source.data === "") invalid(`${at}.source.data: must be base64 text.`, `${at}.source.data`);
    return { type: "input_image", image_url: `data:${source.media_type};base64,${source.data}`, detail: "auto" };
  }
  if (source.type === "url") {
    if (typeof source.url !== "string" || source.url === "") invalid(`${at}.source.url: must be a URL.`, `${at}.source.url`);
    return { type: "input_image", image_url: source.url, detail: "auto" };
  }
  invalid(`${at}.source.type: images must be base64 or url.`, `${at}.source.type`);
}

function documentParts(block: JsonObject, at: string): JsonObject[] {
  const source = block.source;
  if (!isObject(source)) invalid(`${at}.source: must be an object.`, `${at}.source`);
  const filename = typeof block.title === "string" && block.title !== "" ? block.title : "document.pdf";
  switch (source.type) {
    case "base64":
      if (source.media_type !== "application/pdf") invalid(`${at}.source.media_type: base64 documents must be application/pdf.`, `${at}.source.media_type`);
      if (typeof source.data !== "string" || source.data === "") invalid(`${at}.source.data: must be base64 text.`, `${at}.source.data`);
      return [{ type: "input_file", filename, file_data: `data:application/pdf;base64,${source.data}` }];
    case "url":
      if (typeof source.url !== "string" || source.url === "") invalid(`${at}.source.url: must be a URL.`, `${at}.source.url`);
      return [{ type: "input_file", file_url: source.url }];
    case "text":
      if (typeof source.data !== "string") invalid(`${at}.source.data: must be a string.`, `${at}.source.data`);
      return source.data === "" ? [] : [{ type: "input_text", text: source.data }];
    case "content": {
      // A document made of blocks: its text and images, as if they stood in the turn.
      const content = typeof source.content === "string" ? [{ type: "text", text: source.content }] : source.content;
      if (!Array.isArray(content)) invalid(`${at}.source.content: must be a string or an array of blocks.`, `${at}.source.content`);
      return content.flatMap((part: unknown, k: number) => {
        const pat = `${at}.source.content.${k}`;
        if (!isObject(part)) invalid(`${pat}: must be a content block.`, pat);
        if (part.type === "image") return [imagePart(part, pat)];
        if (part.type !== "text" || typeof part.text !== "string") invalid(`${pat}: a document's content holds text and image blocks.`, pat);
        return part.text === "" ? [] : [{ type: "input_text", text: part.text }];
      });
    }
    default:
      invalid(`${at}.source.type: documents must be base64 (PDF), url, text or content.`, `${at}.source.type`);
  }
}

function toolResultItem(block: JsonObject, at: string, toolUseIds: ReadonlySet<string>): JsonObject {
  const id = block.tool_use_id;
  if (typeof id !== "string" || id === "") invalid(`${at}.tool_use_id: must be a non-empty string.`, `${at}.tool_use_id`);
  if (!toolUseIds.has(id)) invalid(`${at}.tool_use_id: no tool_use block with id "${id.slice(0, 64)}" comes before it.`, `${at}.tool_use_id`);
  if (block.is_error != null && typeof block.is_error !== "boolean") invalid(`${at}.is_error: must be a boolean.`, `${at}.is_error`);
  const prefix = block.is_error === true ? TOOL_ERROR_PREFIX : "";
  const content = block.content;
  if (content == null || typeof content === "string") return { type: "function_call_output", call_id: id, output: prefix + (content ?? "") };
  if (!Array.isArray(content)) invalid(`${at}.content: must be a string or an array of blocks.`, `${at}.content`);
  const parts: JsonObject[] = [];
  content.forEach((part: unknown, k: number) => {
    const pat = `${at}.content.${k}`;
    if (!isObject(part)) invalid(`${pat}: must be a content block.`, pat);
    if (part.type === "text") {
      if (typeof part.text !== "string") invalid(`${pat}.text: must be a string.`, `${pat}.text`);
      if (part.text !== "") parts.push({ type: "input_text", text: part.text });
    } else if (part.type === "image") parts.push(imagePart(part, pat));
    else if (part.type === "document") parts.push(...documentParts(part, pat));
    else invalid(`${pat}.type: a tool result holds text, image or document blocks.`, `${pat}.type`);
  });
  // Text alone is said as one string (what every upstream takes); with an image the output is a list of parts.
  if (parts.every((p) => p.type === "input_text")) return { type: "function_call_output", call_id: id, output: prefix + parts.map((p) => p.text).join("\n") };
  if (prefix !== "") parts.unshift({ type: "input_text", text: prefix.trimEnd() });
  return { type: "function_call_output", call_id: id, output: parts };
}
