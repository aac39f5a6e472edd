/**
 * The digests updater protocols need, kept with each asset: SHA-512 in base64 (electron-updater's `sha512`) and
 * SHA-1 in hex (Squirrel.Windows' RELEASES). They are computed where bytes are stored (the mirror's write hashes
 * SHA-256, SHA-512 and SHA-1 in one pass: publish, upload, sync, pull-through), so no document or request hashes
 * anything.
 *
 * Decision: assets whose bytes were stored before the digests existed get them from a backfill that a server runs
 * once at start (in the background, one read per distinct file), not lazily on a request: a feed must not wait for
 * a file to be hashed, and after the backfill no asset with mirrored bytes lacks them. Until then (and for an asset
 * known only by its upstream address, until pulled through) an asset without them is not offered by the feeds that
 * need them.
 */
import type { Mirror, MirrorObject } from "./mirror";
import type { AssetFields, AssetRecord, ReleaseRepository } from "./release-repository";

/** The asset fields of bytes just stored: their digests and size. */
export function storedFields(obj: MirrorObject): Required<Pick<AssetFields, "sha256" | "sha512" | "sha1" | "size">> {
  return { sha256: obj.sha256, sha512: obj.sha512, sha1: obj.sha1, size: obj.size };
}

/** The fields of an asset with no stored bytes: every digest unknown. */
export const NO_DIGESTS = { sha256: "", sha512: "", sha1: "" } as const;

/** SHA-512 (base64) and SHA-1 (hex) of bytes already stored, read once as a stream (never whole into memory). */
export async function updaterDigestsOf(blob: Blob): Promise<{ sha512: string; sha1: string }> {
  const sha512 = new Bun.CryptoHasher("sha512");
  const sha1 = new Bun.CryptoHasher("sha1");
  for await (const chunk of blob.stream()) {
    sha512.update(chunk);
    sha1.update(chunk);
  }
  return { sha512: sha512.digest("base64"), sha1: sha1.digest("hex") };
}

/** Mirrored assets still without the updaters' digests. */
export function missingDigests(assets: readonly AssetRecord[]): AssetRecord[] {
  return assets.filter((a) => a.mirrored && a.sha256 !== "" && (!a.sha512 || !a.sha1));
}

export interface BackfillDeps {
  store: Pick<ReleaseRepository, "list" | "getAsset" | "updateAsset">;
  mirror: Pick<Mirror, "open">;
  signal?: AbortSignal;
}

/**
 * Computes the missing digests of mirrored assets, one read per distinct file; returns how many assets got them.
 * An asset whose bytes changed meanwhile (another SHA-256 now) is left to the write that changed them. Safe to run
 * on several instances at once: each writes the same values.
 */
export async function backfillUpdaterDigests(deps: BackfillDeps): Promise<number> {
  const bySha = new Map<string, AssetRecord[]>();
  for (const r of await deps.store.list()) {
    for (const a of missingDigests(r.assets)) bySha.set(a.sha256, [...(bySha.get(a.sha256) ?? []), a]);
  }
  let filled = 0;
  for (const [sha256, assets] of bySha) {
    if (deps.signal?.aborted) break;
    const blob = await deps.mirror.open(sha256);
    if (!blob) continue;
    const digests = await updaterDigestsOf(blob);
    for (const a of assets) {
      const now = await deps.store.getAsset(a.id);
      if (!now || !now.mirrored || now.sha256 !== sha256) continue;
      await deps.store.updateAsset(a.id, digests);
      filled++;
    }
  }
  return filled;
}
