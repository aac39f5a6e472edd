/**
 * A minisign public key (the format `minisign` and Tauri's updater signer write), read from the forms the setting
 * GANTRY_RELEASE_PUBLIC_KEY takes. Kept apart from the signatures (site/releases/minisign.ts) because the settings
 * check it at load, and the settings import no feature: the format is shared, the verification is the releases'.
 *
 * Public key: base64 of "Ed" (signature algorithm) ‖ key id (8 bytes) ‖ Ed25519 public key (32 bytes). A `.pub` file
 * is `untrusted comment: …` then that line. Tauri configs hold the base64 of the whole `.pub` file.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";

export interface MinisignPublicKey {
  keyId: Uint8Array;
  key: KeyObject;
  /** The base64 line, as minisign's `-P` takes it. */
  line: string;
}

/** The signature of a file cannot be used or does not match: the message says which. */
export class MinisignError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MinisignError";
  }
}

/** DER SubjectPublicKeyInfo prefix of a raw Ed25519 key (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
export const UNTRUSTED = "untrusted comment:";

export function strictBase64(s: string): Uint8Array | null {
  const t = s.trim();
  if (t === "" || t.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(t)) return null;
  return new Uint8Array(Buffer.from(t, "base64"));
}

export const hexId = (id: Uint8Array) => Buffer.from(id).reverse().toString("hex").toUpperCase();

/** The key's id as minisign prints it (`minisign public key 8B7DFA0B371A498F`). */
export function keyIdHex(id: Uint8Array): string {
  return hexId(id);
}

/** Parses the base64 key line. */
export function parsePublicKeyLine(line: string): MinisignPublicKey {
  const bytes = strictBase64(line);
  if (!bytes || bytes.length !== 42 || bytes[0] !== 0x45 || bytes[1] !== 0x64) {
    throw new MinisignError("not a minisign public key (base64 of 'Ed', an 8-byte key id and a 32-byte Ed25519 key)");
  }
  const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, bytes.subarray(10)]), format: "der", type: "spki" });
  return { keyId: bytes.slice(2, 10), key, line: line.trim() };
}

/** The key line of a `.pub` file's text (a comment line, then the key). */
function keyLineOfPubText(text: string): string | null {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  if (lines.length === 2 && lines[0].startsWith(UNTRUSTED)) return lines[1];
  if (lines.length === 1) return lines[0];
  return null;
}

/**
 * The setting GANTRY_RELEASE_PUBLIC_KEY: the base64 key line (`RW…`, as `minisign -P` takes it), Tauri's form
 * (the base64 of the whole `.pub` file, as in tauri.conf.json), or the path of a `.pub` file.
 */
export function parsePublicKeySetting(value: string): MinisignPublicKey {
  const v = value.trim();
  const raw = strictBase64(v);
  if (raw && raw.length === 42) return parsePublicKeyLine(v);
  if (raw) {
    const line = keyLineOfPubText(Buffer.from(raw).toString("utf8"));
    if (line && new TextDecoder().decode(raw).startsWith(UNTRUSTED)) return parsePublicKeyLine(line);
  }
  if (v !== "" && existsSync(v)) {
    let text: string;
    try {
      text = readFileSync(v, "utf8");
    } catch {
      throw new MinisignError(`cannot read the public key file ${v}`);
    }
    const line = keyLineOfPubText(text);
    if (!line) throw new MinisignError(`${v} is not a minisign public key file`);
    try {
      return parsePublicKeyLine(line);
    } catch {
      throw new MinisignError(`${v} is not a minisign public key file`);
    }
  }
  throw new MinisignError("not a minisign public key: give the key line (RW…), the base64 of a .pub file, or a .pub file's path");
}

/** Whether the setting's value names a usable public key (config validation). */
export function isPublicKeySetting(value: unknown): boolean {
  if (value === "") return true;
  if (typeof value !== "string") return false;
  try {
    parsePublicKeySetting(value);
    return true;
  } catch {
    return false;
  }
}
