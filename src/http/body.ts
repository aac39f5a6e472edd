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

/** Reads and parses a JSON object body. Arrays, scalars and malformed JSON are refused with 400. */
export async function readJsonObject(request: Request, maxBytes: number): Promise<{ body: Record<string, any>; bytes: number; text: string }> {
  const text = await readBodyText(request, maxBytes);
  if (text.trim() === "") throw new AppError("invalid_json", "The request body is empty; a JSON object is expected.");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new AppError("invalid_json", `The request body is not valid JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AppError("invalid_json", "The request body must be a JSON object.");
  }
  return { body: body as Record<string, any>, bytes: text.length, text };
}
