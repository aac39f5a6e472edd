/**
 * minisign signatures (what `minisign` and Tauri's updater signer produce), parsed and verified here without a
 * library. Formats (jedisct1/minisign, Tauri's `tauri signer`):
 *
 * - Signature file (`.minisig`): `untrusted comment: …`, then base64 of algorithm (2 bytes) ‖ key id (8) ‖
 *   Ed25519 signature (64); then `trusted comment: …`, then base64 of the global signature (64 bytes), which signs
 *   signature ‖ trusted comment (the text after `trusted comment: `). Algorithm "Ed" (legacy) signs the file's
 *   bytes; "ED" (prehashed, minisign's default since 0.9) signs BLAKE2b-512 of them. Tauri's `.sig` is the base64
 *   of that whole text.
 */
import { verify } from "node:crypto";
import { MinisignError, UNTRUSTED, hexId, strictBase64, type MinisignPublicKey } from "../../minisign-key";

export interface MinisignSignature {
  /** The signature file's text as given (a Tauri `.sig`, the base64 of that text, decoded to it). */
  text: string;
  prehashed: boolean;
  keyId: Uint8Array;
  signature: Uint8Array;
  trustedComment: string;
  globalSignature: Uint8Array;
}

const TRUSTED = "trusted comment: ";

const MAX_SIGNATURE_FILE = 64 * 1024;

/** Parses a signature file: minisign's text or a Tauri `.sig` (the base64 of that text). */
export function parseSignature(fileText: string): MinisignSignature {
  if (fileText.length > MAX_SIGNATURE_FILE) throw new MinisignError("is not a minisign signature (too large)");
  let text = fileText;
  if (!text.startsWith(UNTRUSTED)) {
    const decoded = strictBase64(text);
    const asText = decoded ? new TextDecoder("utf-8", { fatal: false }).decode(decoded) : "";
    if (!asText.startsWith(UNTRUSTED)) throw new MinisignError("is not a minisign signature (no 'untrusted comment:' line)");
    text = asText;
  }
  const lines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  while (lines.length > 4 && lines[lines.length - 1] === "") lines.pop();
  if (lines.length !== 4 || !lines[0].startsWith(UNTRUSTED) || !lines[2].startsWith(TRUSTED)) {
    throw new MinisignError("is not a minisign signature (expected 4 lines: untrusted comment, signature, trusted comment, global signature)");
  }
  const sig = strictBase64(lines[1]);
  if (!sig || sig.length !== 74) throw new MinisignError("is not a minisign signature (the signature line is not 74 bytes of base64)");
  const alg = String.fromCharCode(sig[0], sig[1]);
  if (alg !== "Ed" && alg !== "ED") throw new MinisignError(`uses an unknown signature algorithm '${alg.replace(/[^\x20-\x7e]/g, "?")}'`);
  const global = strictBase64(lines[3]);
  if (!global || global.length !== 64) throw new MinisignError("is not a minisign signature (the global signature is not 64 bytes of base64)");
  return {
    text,
    prehashed: alg === "ED",
    keyId: sig.slice(2, 10),
    signature: sig.slice(10),
    trustedComment: lines[2].slice(TRUSTED.length),
    globalSignature: global,
  };
}

/** The bytes the signature covers: the whole file (legacy) or its BLAKE2b-512 (prehashed), read as a stream. */
async function signedMessage(sig: MinisignSignature, data: ReadableStream<Uint8Array> | Uint8Array): Promise<Uint8Array> {
  if (!sig.prehashed) {
    if (data instanceof Uint8Array) return data;
    return new Uint8Array(await new Response(data).arrayBuffer());
  }
  const h = new Bun.CryptoHasher("blake2b512");
  if (data instanceof Uint8Array) h.update(data);
  else for await (const chunk of data as unknown as AsyncIterable<Uint8Array>) h.update(chunk);
  return new Uint8Array(h.digest() as unknown as ArrayBufferLike);
}

/** Legacy signatures hash nothing, so the file is held whole; files larger than this must be signed prehashed. */
export const MAX_LEGACY_SIGNED_BYTES = 512 * 1024 * 1024;

/**
 * Checks a signature against the key and the data (a stream is read once, hashed as it goes for prehashed
 * signatures). Throws MinisignError saying what is wrong; returns the parsed signature.
 */
export async function verifySignature(
  key: MinisignPublicKey,
  sigText: string,
  data: ReadableStream<Uint8Array> | Uint8Array,
  size?: number,
): Promise<MinisignSignature> {
  const sig = parseSignature(sigText);
  if (!Buffer.from(sig.keyId).equals(Buffer.from(key.keyId))) {
    if (data instanceof ReadableStream) await data.cancel().catch(() => {});
    throw new MinisignError(`was made with key ${hexId(sig.keyId)}, not the configured key ${hexId(key.keyId)}`);
  }
  if (!sig.prehashed && size !== undefined && size > MAX_LEGACY_SIGNED_BYTES) {
    if (data instanceof ReadableStream) await data.cancel().catch(() => {});
    throw new MinisignError(`is a legacy (not prehashed) signature of a file over ${MAX_LEGACY_SIGNED_BYTES} bytes; sign it with a current minisign`);
  }
  const message = await signedMessage(sig, data);
  if (!verify(null, message, key.key, sig.signature)) throw new MinisignError("does not match the file (wrong file, or a changed byte)");
  const global = Buffer.concat([sig.signature, Buffer.from(sig.trustedComment, "utf8")]);
  if (!verify(null, global, key.key, sig.globalSignature)) throw new MinisignError("has a trusted comment that was changed after signing");
  return sig;
}

/** The `signature` of the documents: the signature file's text in base64, as Tauri's latest.json carries it. */
export function signatureForDocument(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}
