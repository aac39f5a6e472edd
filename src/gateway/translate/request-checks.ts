/** Shape checks shared by the chat request translation: a bad field is a 400 naming it. */
import { AppError } from "../../errors";
import type { JsonObject } from "../wire/responses-types";

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function invalid(message: string, param: string | null): never {
  throw new AppError("invalid_request", message, { param });
}

const MESSAGE_ROLES = new Set(["user", "assistant", "system", "developer"]);
const TEXT_PARTS = new Set(["text", "input_text", "output_text"]);

/**
 * The shape of a Responses `input`, checked before anything goes upstream: a string, or a list of items that are
 * objects with a type (a message may leave it out and give its role), and messages with a known role and content
 * that is a string, null or a list of typed parts. What an item holds beyond that is the upstream's to judge (the
 * API grows), but what is checked here would only come back as an upstream 400 the caller cannot place, or reach
 * code that expects an object: `input: [null]` used to.
 */
export function checkResponsesInput(input: unknown): void {
  if (input === undefined || input === null || typeof input === "string") return;
  if (!Array.isArray(input)) invalid("'input' must be a string or an array of input items.", "input");
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const at = `input[${i}]`;
    if (!isObject(item)) invalid(`'${at}' must be an object.`, at);
    const type = item.type;
    if (type === undefined) {
      if (item.role === undefined) invalid(`'${at}' needs a 'type' (or a 'role', for a message).`, `${at}.type`);
    } else if (typeof type !== "string" || type === "") {
      invalid(`'${at}.type' must be a non-empty string.`, `${at}.type`);
    } else if (type !== "message") {
      continue;
    }
    checkMessageItem(item, at);
  }
}

function checkMessageItem(item: JsonObject, at: string): void {
  if (typeof item.role !== "string" || !MESSAGE_ROLES.has(item.role)) {
    invalid(`'${at}.role' must be one of user, assistant, system, developer.`, `${at}.role`);
  }
  const content = item.content;
  if (content === null || typeof content === "string") return;
  if (!Array.isArray(content)) invalid(`'${at}.content' must be a string or an array of content parts.`, `${at}.content`);
  for (let j = 0; j < content.length; j++) {
    const part: unknown = content[j];
    const pat = `${at}.content[${j}]`;
    if (!isObject(part)) invalid(`'${pat}' must be an object.`, pat);
    if (typeof part.type !== "string" || part.type === "") invalid(`'${pat}.type' must be a non-empty string.`, `${pat}.type`);
    if (TEXT_PARTS.has(part.type) && typeof part.text !== "string") invalid(`'${pat}.text' must be a string.`, `${pat}.text`);
  }
}

/**
 * The shape of a Responses `tools` list: absent, null, or a list of objects with a non-empty string `type`. What a
 * tool holds beyond that is the upstream's to judge; `tools: [null]` used to go up as it came, as `input: [null]` did.
 */
export function checkResponsesTools(tools: unknown): void {
  if (tools === undefined || tools === null) return;
  if (!Array.isArray(tools)) invalid("'tools' must be an array of tools.", "tools");
  for (let i = 0; i < tools.length; i++) {
    const tool: unknown = tools[i];
    const at = `tools[${i}]`;
    if (!isObject(tool)) invalid(`'${at}' must be an object.`, at);
    if (typeof tool.type !== "string" || tool.type === "") invalid(`'${at}.type' must be a non-empty string.`, `${at}.type`);
  }
}
