/**
 * The signatures of a publish: which given files are signatures of others (`NAME.minisig` / `NAME.sig` beside
 * `NAME`), reading the one beside a file, and what is kept of it (verified with GANTRY_RELEASE_PUBLIC_KEY, carried
 * unchecked without it).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { AppError } from "../../errors";
import { MinisignError, type MinisignPublicKey } from "../../minisign-key";
import { parseSignature, verifySignature } from "./minisign";

const SIGNATURE_SUFFIXES = [".minisig", ".sig"] as const;

/** What the split needs of a publish's source (release-catalog.ts PublishSource). */
type Source = { kind: "file"; name: string; path: string } | { kind: "url"; name: string };
type FileOf<S> = Extract<S, { kind: "file" }>;

/**
 * Splits a publish's sources into assets and the signature files attached to them: `NAME.minisig` or `NAME.sig`
 * given beside `NAME` in the same publish is NAME's signature, not an asset of its own. A signature file whose
 * asset is not in the publish stays an ordinary asset (e.g. a GPG `.sig`).
 */
export function signaturesOf<S extends Source>(sources: S[]): { assets: S[]; signatureFiles: Map<string, FileOf<S>> } {
  const byName = new Map(sources.map((s) => [s.name, s]));
  const signatureFiles = new Map<string, FileOf<S>>();
  const attached = new Set<string>();
  for (const s of sources) {
    if (s.kind !== "file") continue;
    for (const suffix of SIGNATURE_SUFFIXES) {
      if (!s.name.endsWith(suffix)) continue;
      const target = byName.get(s.name.slice(0, -suffix.length));
      if (target && target.kind === "file" && !signatureFiles.has(target.name)) {
        signatureFiles.set(target.name, s as FileOf<S>);
        attached.add(s.name);
      }
    }
  }
  return { assets: sources.filter((s) => !attached.has(s.name)), signatureFiles };
}

/** The text of FILE's signature: the one given in the publish, else FILE.minisig, else FILE.sig beside it. */
export function readSignatureBeside(s: { path: string }, given: { path: string } | undefined): string | null {
  const candidates = given ? [given.path] : SIGNATURE_SUFFIXES.map((suffix) => join(dirname(s.path), basename(s.path) + suffix));
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    try {
      if (statSync(path).size > 64 * 1024) throw new Error("too large");
      return readFileSync(path, "utf8");
    } catch {
      throw new AppError("invalid_request", `'${path}' is not a readable signature file.`, { param: "files" });
    }
  }
  return null;
}

/**
 * The signature text to keep for an asset: with the key set, it must verify against `data`; without it, a
 * minisign signature is carried unchecked (it must parse), anything else (a GPG .sig) is left out.
 */
export async function signatureToKeep(publicKey: MinisignPublicKey | null, name: string, sigText: string, data: ReadableStream<Uint8Array>, size: number): Promise<string | null> {
  if (!publicKey) {
    await data.cancel().catch(() => {});
    try {
      return parseSignature(sigText).text;
    } catch (err) {
      if (err instanceof MinisignError) return null;
      throw err;
    }
  }
  try {
    return (await verifySignature(publicKey, sigText, data, size)).text;
  } catch (err) {
    await data.cancel().catch(() => {});
    if (err instanceof MinisignError) throw new AppError("invalid_request", `The signature of ${name} ${err.message}: refused (GANTRY_RELEASE_PUBLIC_KEY).`, { param: "files" });
    throw err;
  }
}

/** Adds (or replaces) one asset from a byte stream, e.g. an admin upload. */
