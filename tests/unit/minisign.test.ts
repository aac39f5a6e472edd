import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MinisignError, parsePublicKeySetting } from "../../src/minisign-key";
import { parseSignature, signatureForDocument, verifySignature } from "../../src/site/releases/minisign";
import { minisignKeys, minisignSign } from "../support/minisign";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

/** A 3 MiB file of varied bytes: more than one stream chunk. */
function payload(): Uint8Array {
  const b = new Uint8Array(3 * 1024 * 1024 + 17);
  for (let i = 0; i < b.length; i++) b[i] = (i * 2654435761) >>> 24;
  return b;
}

describe("minisign verification against real minisign signatures", () => {
  const dir = tempDir("minisign");
  const keys = minisignKeys(dir);
  const other = minisignKeys(dir, "other");
  const file = join(dir, "app-1.0.0-x64-setup.exe");
  const bytes = payload();
  writeFileSync(file, bytes);
  const prehashed = minisignSign(keys, file, { trusted: "app 1.0.0" });
  const legacy = minisignSign(keys, file, { legacy: true, sigPath: join(dir, "legacy.minisig") });
  const key = parsePublicKeySetting(keys.line);

  test("a prehashed (ED) signature verifies, from a stream and from bytes", async () => {
    const sig = await verifySignature(key, prehashed, Bun.file(file).stream(), bytes.length);
    expect(sig.prehashed).toBe(true);
    expect(sig.trustedComment).toBe("app 1.0.0");
    expect(sig.text).toBe(prehashed);
    expect((await verifySignature(key, prehashed, bytes)).prehashed).toBe(true);
  });

  test("a legacy (Ed) signature verifies", async () => {
    const sig = await verifySignature(key, legacy, Bun.file(file).stream(), bytes.length);
    expect(sig.prehashed).toBe(false);
  });

  test("one changed byte of the file is refused, for both kinds", async () => {
    const tampered = bytes.slice();
    tampered[1_500_000] ^= 1;
    for (const s of [prehashed, legacy]) {
      await expect(verifySignature(key, s, tampered)).rejects.toThrow("does not match the file");
    }
  });

  test("another key's signature is refused by key id", async () => {
    const otherSig = minisignSign(other, file, { sigPath: join(dir, "other.minisig") });
    await expect(verifySignature(key, otherSig, bytes)).rejects.toThrow(/was made with key [0-9A-F]{16}, not the configured key/);
  });

  test("a changed trusted comment is refused by the global signature", async () => {
    const lines = prehashed.split("\n");
    lines[2] = "trusted comment: app 9.9.9";
    await expect(verifySignature(key, lines.join("\n"), bytes)).rejects.toThrow("trusted comment");
  });

  test("a changed signature byte is refused", async () => {
    const lines = prehashed.split("\n");
    const raw = Buffer.from(lines[1], "base64");
    raw[40] ^= 0x80;
    lines[1] = raw.toString("base64");
    await expect(verifySignature(key, lines.join("\n"), bytes)).rejects.toThrow(MinisignError);
  });

  test("a same-id key with other key bytes does not verify (the key, not only its id, is checked)", async () => {
    const raw = Buffer.from(keys.line, "base64");
    const forged = Buffer.concat([raw.subarray(0, 10), Buffer.from(other.line, "base64").subarray(10)]).toString("base64");
    await expect(verifySignature(parsePublicKeySetting(forged), prehashed, bytes)).rejects.toThrow("does not match");
  });

  test("a Tauri .sig (base64 of the minisign text) is read the same; the document form is that base64", async () => {
    const tauri = Buffer.from(prehashed).toString("base64");
    const sig = await verifySignature(key, tauri, bytes);
    expect(sig.text).toBe(prehashed);
    expect(signatureForDocument(sig.text)).toBe(tauri);
  });

  test("the public key setting: key line, .pub path, base64 of the .pub file (Tauri); garbage refused", () => {
    const fromPath = parsePublicKeySetting(keys.pubPath);
    const tauri = parsePublicKeySetting(Buffer.from(readFileSync(keys.pubPath, "utf8")).toString("base64"));
    for (const k of [fromPath, tauri]) {
      expect(Buffer.from(k.keyId).equals(Buffer.from(key.keyId))).toBe(true);
      expect(k.line).toBe(keys.line);
    }
    expect(() => parsePublicKeySetting("RWQ-not-a-key")).toThrow(MinisignError);
    expect(() => parsePublicKeySetting(join(dir, "missing.pub"))).toThrow(MinisignError);
    expect(() => parsePublicKeySetting(file)).toThrow(MinisignError);
  });

  test("malformed signature files are refused with a reason", () => {
    expect(() => parseSignature("")).toThrow("untrusted comment");
    expect(() => parseSignature("untrusted comment: x\nAAAA\n")).toThrow("4 lines");
    expect(() => parseSignature(prehashed.replace(/\n[A-Za-z0-9+/=]+\ntrusted/, "\nAAAA\ntrusted"))).toThrow("74 bytes");
  });
});
