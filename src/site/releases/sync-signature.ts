/**
 * The signature of a synced asset: fetched from the release asset beside it (`NAME.minisig` / `NAME.sig`, see
 * sync-plan.ts) through the sync's guarded fetch, and what is kept of it. With GANTRY_RELEASE_PUBLIC_KEY it must be
 * this key's (checked before any byte of the asset is downloaded) and verify against the very bytes that go into
 * the mirror; without it a minisign signature is carried unchecked and anything else (a GPG `.sig`) is dropped,
 * as publish does (publish-signatures.ts).
 */
import { DownloadFetchError, fetchFollowingRedirects } from "../fetch/download-fetch";
import { MinisignError, keyIdHex, type MinisignPublicKey } from "../../minisign-key";
import { parseSignature, verifySignature } from "./minisign";
import type { AssetRecord } from "./rules/release-types";
import { credentials, type GitHubSource } from "./sync-github";

/** A signature file is a few hundred bytes; this bounds what a misbehaving server can make us hold. */
const MAX_SIGNATURE_BYTES = 64 * 1024;

/** The asset's signature is missing or does not verify with GANTRY_RELEASE_PUBLIC_KEY: the message says which. */
export class SignatureRefused extends Error {
  constructor(message: string) {
    super(`${message}; not offered until it verifies (GANTRY_RELEASE_PUBLIC_KEY)`);
    this.name = "SignatureRefused";
  }
}

/** Where to fetch the signature: its API address with a token (as for the asset itself), else its download address. */
export function signatureAddress(asset: Pick<AssetRecord, "signatureUrl" | "signatureApiUrl">, source: GitHubSource): string | null {
  return source.token && asset.signatureApiUrl ? asset.signatureApiUrl : (asset.signatureUrl ?? asset.signatureApiUrl);
}

/** The signature file's text. Fails (DownloadFetchError) on anything but a 200 of at most 64 KiB. */
export async function fetchSignature(url: string, source: GitHubSource, options: { fetch: typeof fetch; signal?: AbortSignal }): Promise<string> {
  const res = await fetchFollowingRedirects(url, {
    fetch: options.fetch,
    headers: { accept: "application/octet-stream", "user-agent": "gantry-release-sync" },
    // The token goes to the API's origin only, never to the storage host a download redirects to.
    ...credentials(source),
    signal: options.signal,
    idleTimeoutMs: 30_000,
  });
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw new DownloadFetchError(`the signature's download answered ${res.status}`, res.status);
  }
  if (!res.body) throw new DownloadFetchError("the signature's download has no body");
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > MAX_SIGNATURE_BYTES) {
      await res.body.cancel().catch(() => {});
      throw new DownloadFetchError(`the signature file is larger than ${MAX_SIGNATURE_BYTES / 1024} KiB`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** With the key: refuses, before the asset is downloaded, a signature that is malformed or of another key. */
export function precheckSignature(publicKey: MinisignPublicKey, text: string): void {
  let keyId: Uint8Array;
  try {
    keyId = parseSignature(text).keyId;
  } catch (err) {
    if (err instanceof MinisignError) throw new SignatureRefused(`its signature ${err.message}`);
    throw err;
  }
  if (!Buffer.from(keyId).equals(Buffer.from(publicKey.keyId))) {
    throw new SignatureRefused(`its signature was made with key ${keyIdHex(keyId)}, not the configured key ${keyIdHex(publicKey.keyId)}`);
  }
}

/** With the key: verifies the bytes streamed in `data` (one branch of the download's tee); the text to keep. */
export async function verifiedSignature(publicKey: MinisignPublicKey, text: string, data: ReadableStream<Uint8Array>, size: number | null): Promise<string> {
  try {
    return (await verifySignature(publicKey, text, data, size ?? undefined)).text;
  } catch (err) {
    await data.cancel().catch(() => {});
    if (err instanceof MinisignError) throw new SignatureRefused(`its signature ${err.message}`);
    throw err;
  }
}

/** Without the key: the text carried unchecked (a Tauri `.sig` decoded), or null when it is no minisign signature. */
export function carriedSignature(text: string): string | null {
  try {
    return parseSignature(text).text;
  } catch (err) {
    if (err instanceof MinisignError) return null;
    throw err;
  }
}
