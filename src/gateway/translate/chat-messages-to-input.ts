/**
 * Chat `messages` -> Responses `input` items (and the leading system/developer text as `instructions`).
 * Part of the chat-to-responses translation: roles, content parts, tool calls and tool results.
 */
import type { JsonObject } from "../wire/responses-types";
import { invalid, isObject } from "./request-checks";

/**
 * System and developer messages that come before the first other message form `instructions`, joined in
 * order with a blank line. Later ones stay in `input` as developer messages, so a mid-conversation
 * instruction keeps its position relative to the turns it refers to (Responses has no system role in
 * input; developer is its equivalent). Blank ones (empty or white space) are left out.
 */
export function messagesToInput(messages: unknown): { instructions?: string; input: JsonObject[] } {
  if (!Array.isArray(messages)) invalid("`messages` must be an array.", "messages");
  if (messages.length === 0) invalid("`messages` must not be empty.", "messages");

  const leading: string[] = [];
  const input: JsonObject[] = [];
  // Call ids seen so far: a tool result answering no earlier call makes the upstream reject the whole
  // request ("No tool call found for function call output"), so such results are dropped instead.
  const callIds = new Set<string>();
  let inLeadingBlock = true;

  messages.forEach((message: unknown, i: number) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) invalid(`${at} must be an object.`, at);
    const role = message.role;
    if (typeof role !== "string") invalid(`${at}.role is required.`, `${at}.role`);

    switch (role) {
      case "system":
      case "developer": {
        const text = textOnlyContent(message.content, `${at}.content`);
        // A blank system message instructs nothing: it is left out (in front, it would make the instructions
        // blank, which the upstream refuses; later, an empty developer message).
        if (!/\S/.test(text)) return;
        if (inLeadingBlock) {
          leading.push(text);
        } else {
          input.push({ type: "message", role: "developer", content: [{ type: "input_text", text }] });
        }
        return;
      }
      case "user":
        inLeadingBlock = false;
        input.push({ type: "message", role: "user", content: userContent(message.content, `${at}.content`) });
        return;
      case "assistant":
        inLeadingBlock = false;
        for (const item of assistantItems(message, at)) {
          if (item.type === "function_call") callIds.add(item.call_id);
          input.push(item);
        }
        return;
      case "tool": {
        inLeadingBlock = false;
        const callId = message.tool_call_id;
        if (typeof callId !== "string" || callId === "") {
          invalid(`${at}.tool_call_id is required on a tool message.`, `${at}.tool_call_id`);
        }
        const output = textOnlyContent(message.content, `${at}.content`);
        if (callIds.has(callId)) input.push({ type: "function_call_output", call_id: callId, output });
        return;
      }
      case "function": {
        // Legacy function results carry no call id; the function name stands in for it, matching the
        // call_id given to a legacy assistant `function_call` below.
        inLeadingBlock = false;
        const name = message.name;
        if (typeof name !== "string" || name === "") invalid(`${at}.name is required on a function message.`, `${at}.name`);
        const output = textOnlyContent(message.content, `${at}.content`);
        if (callIds.has(name)) input.push({ type: "function_call_output", call_id: name, output });
        return;
      }
      default:
        invalid(`${at}.role: unknown role ${JSON.stringify(role)}.`, `${at}.role`);
    }
  });

  return leading.length > 0 ? { instructions: leading.join("\n\n"), input } : { input };
}

/** System, developer and tool content: a string or text parts (parts joined with a newline). */
function textOnlyContent(content: unknown, at: string): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) invalid(`${at} must be a string or an array of text parts.`, at);
  return content.map((part: unknown, j: number) => textPart(part, `${at}[${j}]`)).join("\n");
}

function textPart(part: unknown, at: string): string {
  if (!isObject(part) || part.type !== "text") invalid(`${at}: only text parts are allowed here.`, `${at}.type`);
  if (typeof part.text !== "string") invalid(`${at}.text must be a string.`, `${at}.text`);
  return part.text;
}

function userContent(content: unknown, at: string): JsonObject[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  if (!Array.isArray(content)) invalid(`${at} must be a string or an array of content parts.`, at);
  if (content.length === 0) invalid(`${at} must not be empty.`, at);
  return content.map((part: unknown, j: number) => userPart(part, `${at}[${j}]`));
}

function userPart(part: unknown, at: string): JsonObject {
  if (!isObject(part)) invalid(`${at} must be an object.`, at);
  switch (part.type) {
    case "text":
      return { type: "input_text", text: textPart(part, at) };
    case "image_url":
      return imagePart(part, at);
    case "file":
      return filePart(part, at);
    case "input_audio":
      invalid(`${at}: audio input is not supported.`, `${at}.type`);
    default:
      invalid(`${at}: unsupported content part type ${JSON.stringify(part.type)}.`, `${at}.type`);
  }
}

function imagePart(part: JsonObject, at: string): JsonObject {
  // Some clients send `image_url` as the bare URL string rather than `{url}`; both mean the same.
  const image = typeof part.image_url === "string" ? { url: part.image_url } : part.image_url;
  if (!isObject(image)) invalid(`${at}.image_url must be an object with a url.`, `${at}.image_url`);
  const url = image.url;
  // An empty data URL would reach the model as an image with no bytes; the caller should hear about it.
  if (typeof url !== "string" || url === "" || /^data:[^,]*,$/.test(url)) {
    invalid(`${at}.image_url.url must be a non-empty URL or data URL.`, `${at}.image_url.url`);
  }
  const detail = image.detail ?? "auto";
  if (typeof detail !== "string") invalid(`${at}.image_url.detail must be a string.`, `${at}.image_url.detail`);
  // `detail` is required on a Responses input_image; "auto" is the chat API's default.
  return { type: "input_image", image_url: url, detail };
}

function filePart(part: JsonObject, at: string): JsonObject {
  const file = part.file;
  if (!isObject(file) || (typeof file.file_data !== "string" && typeof file.file_id !== "string")) {
    invalid(`${at}.file must have file_data or file_id.`, `${at}.file`);
  }
  const out: JsonObject = { type: "input_file" };
  for (const key of ["file_data", "file_id", "filename"]) {
    if (typeof file[key] === "string") out[key] = file[key];
  }
  return out;
}

/**
 * An assistant turn: one message item for its text and refusal (typed output_text, because the upstream
 * rejects input_text on assistant history), then one function_call item per tool call.
 */
function assistantItems(message: JsonObject, at: string): JsonObject[] {
  const parts: JsonObject[] = [];
  const content = message.content;
  if (typeof content === "string") {
    if (content !== "") parts.push({ type: "output_text", text: content });
  } else if (Array.isArray(content)) {
    content.forEach((part: unknown, j: number) => {
      const pat = `${at}.content[${j}]`;
      if (isObject(part) && part.type === "refusal") {
        if (typeof part.refusal !== "string") invalid(`${pat}.refusal must be a string.`, `${pat}.refusal`);
        parts.push({ type: "refusal", refusal: part.refusal });
      } else {
        parts.push({ type: "output_text", text: textPart(part, pat) });
      }
    });
  } else if (content != null) {
    invalid(`${at}.content must be a string, an array of parts, or null.`, `${at}.content`);
  }
  if (typeof message.refusal === "string" && message.refusal !== "") {
    parts.push({ type: "refusal", refusal: message.refusal });
  }

  const items: JsonObject[] = [];
  if (parts.length > 0) items.push({ type: "message", role: "assistant", content: parts });

  const toolCalls = message.tool_calls;
  if (toolCalls != null) {
    if (!Array.isArray(toolCalls)) invalid(`${at}.tool_calls must be an array.`, `${at}.tool_calls`);
    toolCalls.forEach((call: unknown, k: number) => items.push(toolCallItem(call, `${at}.tool_calls[${k}]`)));
  }
  if (message.function_call != null) {
    const legacy = message.function_call;
    const fat = `${at}.function_call`;
    if (!isObject(legacy) || typeof legacy.name !== "string" || legacy.name === "") {
      invalid(`${fat}.name is required.`, `${fat}.name`);
    }
    items.push({ type: "function_call", call_id: legacy.name, name: legacy.name, arguments: callArguments(legacy.arguments, fat) });
  }
  return items;
}

function toolCallItem(call: unknown, at: string): JsonObject {
  if (!isObject(call)) invalid(`${at} must be an object.`, at);
  if (call.type != null && call.type !== "function") {
    invalid(`${at}.type: only function tool calls are supported.`, `${at}.type`);
  }
  if (typeof call.id !== "string" || call.id === "") invalid(`${at}.id is required.`, `${at}.id`);
  const fn = call.function;
  if (!isObject(fn) || typeof fn.name !== "string" || fn.name === "") {
    invalid(`${at}.function.name is required.`, `${at}.function.name`);
  }
  return { type: "function_call", call_id: call.id, name: fn.name, arguments: callArguments(fn.arguments, `${at}.function`) };
}

/** The upstream requires arguments to be JSON text; an empty string is not, so it becomes "{}". */
function callArguments(args: unknown, at: string): string {
  if (args == null) return "{}";
  if (typeof args === "string") return args.trim() === "" ? "{}" : args;
  // Some clients echo arguments back parsed; re-serialising keeps the history usable.
  if (isObject(args)) return JSON.stringify(args);
  invalid(`${at}.arguments must be a string.`, `${at}.arguments`);
}
