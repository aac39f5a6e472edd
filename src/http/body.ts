/** Reading request bodies with a size bound, so bad input gets a clear 4xx and never a crash. */
import { AppError } from "../errors";

/** Reads the body as text, refusing more than `maxBytes` (by Content-Length up front, and while reading). */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  // A declared length is the most the server lets through (HTTP/1.1 framing), so the body is read in one go;
  // a chunked body is counted while it streams in.
  if (declared !== null && Number(declared) <= maxBytes) return decodeUtf8(await request.bytes());
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return decodeUtf8(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new AppError("invalid_json", "The request body is not valid UTF-8.");
  }
}

function tooLarge(maxBytes: number): AppError {
  return new AppError("body_too_large", `The request body is larger than the limit of ${maxBytes} bytes.`);
}

/**
 * Reads and parses a JSON object body. Arrays, scalars and malformed JSON are refused with 400; so is a body
 * nested deeper than `maxDepth`, when given (the gateway checks the text itself, once, after its own reads).
 */
export async function readJsonObject(
  request: Request,
  maxBytes: number,
  options: { maxDepth?: number; emptyIsObject?: boolean } = {},
): Promise<{ body: Record<string, any>; bytes: number; text: string }> {
  const text = await readBodyText(request, maxBytes);
  if (text.trim() === "") {
    // For endpoints whose every body field is optional (a heartbeat with its id in a header).
    if (options.emptyIsObject) return { body: {}, bytes: text.length, text };
    throw new AppError("invalid_json", "The request body is empty; a JSON object is expected.");
  }
  const body = parseJson(text);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AppError("invalid_json", "The request body must be a JSON object.");
  }
  if (options.maxDepth !== undefined) checkJsonDepth(text, options.maxDepth);
  return { body: body as Record<string, any>, bytes: text.length, text };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AppError("invalid_json", `The request body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * The body parser of routes whose body Elysia validates (`body:` schemas): read with a bound and the nesting
 * checked before the validator walks it. Elysia's own parser reads without a bound, and its validator recurses
 * into whatever was sent: `{"notes": [[[[…` 100,000 deep overflowed the stack, a 500. An empty body is no body
 * (for optional ones); anything that is not JSON is a 400, whatever the content type says.
 */
export function boundedJsonParser(maxBytes: number): (context: { request: Request }) => Promise<unknown> {
  return async ({ request }) => {
    const text = await readBodyText(request, maxBytes);
    if (text.trim() === "") return undefined;
    const value = parseJson(text);
    checkJsonDepth(text);
    return value;
  };
}

/**
 * Deepest nesting a request body may have. Real requests stay far below it (a tool's JSON schema is a few
 * dozen levels at most), and a body nested without bound (`[[[[...` 100,000 deep parses fine) would overflow
 * the stack when serialised for the upstream or walked by a validator: a 500 instead of a 400.
 */
export const MAX_JSON_DEPTH = 128;

/** Refuses a (valid) JSON text nested deeper than `max`; strings are skipped whole, so their brackets do not count. */
export function checkJsonDepth(text: string, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // Jump to the closing quote: the next `"` not escaped by an odd number of backslashes.
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return;
        let k = j - 1;
        while (text.charCodeAt(k) === 92) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      i = j;
    } else if (c === 91 || c === 123) {
      if (++depth > max) throw new AppError("invalid_request", `The request body is nested more than ${max} levels deep.`);
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
}
