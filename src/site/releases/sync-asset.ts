/**
 * One pending asset of a sync into the mirror, with its signature: the signature first (small; with
 * GANTRY_RELEASE_PUBLIC_KEY a missing, malformed or other key's signature fails before any byte of the asset is
 * downloaded), then the bytes in one download, hashed into the mirror and, with the key, verified on the way (the
 * body is teed: one read, two consumers, as publish does). Bytes that fail verification leave the mirror again
 * unless another asset holds them. Throws on any failure; the caller records it.
 */
import { DownloadFetchError, fetchFollowingRedirects } from "../fetch/download-fetch";
import type { Mirror, MirrorObject } from "./mirror";
import { updaterDigestsOf } from "./asset-digests";
import type { MinisignPublicKey } from "../../minisign-key";
import type { AssetRecord } from "./rules/release-types";
import { credentials, type GitHubSource } from "./sync-github";
import { SignatureRefused, carriedSignature, fetchSignature, precheckSignature, signatureAddress, verifiedSignature } from "./sync-signature";

export interface AssetMirrorDeps {
  mirror: Mirror;
  fetch: typeof fetch;
  /** GANTRY_RELEASE_PUBLIC_KEY, or null: signatures carried unchecked. */
  publicKey: MinisignPublicKey | null;
  /** Whether an asset still points at these bytes (then they stay in the mirror). */
  isShaReferenced(sha256: string): Promise<boolean>;
}

export interface MirroredAsset extends MirrorObject {
  /** The signature text to store with the bytes (null: none, or not a minisign signature without the key). */
  signature: string | null;
  /** The bytes were in the mirror already (another asset ships the same file): nothing downloaded. */
  reused: boolean;
}

export async function mirrorAsset(
  asset: AssetRecord,
  source: GitHubSource,
  deps: AssetMirrorDeps,
  options: { signal?: AbortSignal; onProgress?: (bytes: number) => void },
): Promise<MirroredAsset> {
  const { mirror, publicKey } = deps;
  const sigUrl = signatureAddress(asset, source);
  if (publicKey && !sigUrl) throw new SignatureRefused(`it has no signature (${asset.name}.minisig or ${asset.name}.sig) beside it on the release`);
  const sigText = sigUrl ? await fetchSignature(sigUrl, source, { fetch: deps.fetch, signal: options.signal }) : null;
  if (publicKey && sigText !== null) precheckSignature(publicKey, sigText);
  const unchecked = sigText === null ? null : carriedSignature(sigText);

  const expectedHex = asset.remoteDigest?.replace(/^sha256:/, "") ?? null;
  const expectedSize = asset.remoteSize ?? asset.size;
  // Same digest already mirrored (another release ships the same file): no download; with the key, verified from there.
  const held = expectedHex ? await mirror.open(expectedHex) : null;
  if (expectedHex && held) {
    const signature = publicKey && sigText !== null ? await verifiedSignature(publicKey, sigText, held.stream(), held.size) : unchecked;
    // Nothing downloaded, so the updaters' digests come from the bytes held (sync runs in the background).
    return { sha256: expectedHex, size: held.size, ...(await updaterDigestsOf(held)), signature, reused: true };
  }

  const url = source.token && asset.remoteApiUrl ? asset.remoteApiUrl : (asset.upstreamUrl ?? asset.remoteApiUrl);
  if (!url) throw new DownloadFetchError("the asset has no download address");
  const res = await fetchFollowingRedirects(url, {
    fetch: deps.fetch,
    // GitHub answers the API asset URL with a redirect or the bytes only when asked for octet-stream.
    headers: { accept: "application/octet-stream", "user-agent": "gantry-release-sync" },
    ...credentials(source),
    signal: options.signal,
    idleTimeoutMs: 120_000,
  });
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw new DownloadFetchError(`the download answered ${res.status}`, res.status);
  }
  if (!res.body) throw new DownloadFetchError("the download has no body");
  const put = (body: ReadableStream<Uint8Array>) =>
    mirror.put(body, { expectedSize, expectedSha256: expectedHex, signal: options.signal, onProgress: options.onProgress });
  if (sigText === null || !publicKey) return { ...(await put(res.body)), signature: unchecked, reused: false };
  const [toMirror, toCheck] = res.body.tee();
  const [stored, checked] = await Promise.allSettled([put(toMirror), verifiedSignature(publicKey, sigText, toCheck, expectedSize)]);
  if (stored.status === "rejected") throw stored.reason;
  if (checked.status === "rejected") {
    if (!(await deps.isShaReferenced(stored.value.sha256))) await mirror.remove(stored.value.sha256);
    throw checked.reason;
  }
  return { ...stored.value, signature: checked.value, reused: false };
}
