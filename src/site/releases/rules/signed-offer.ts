/**
 * Which assets the site offers (documents, download links) when GANTRY_RELEASE_PUBLIC_KEY is set. Pure.
 *
 * Publish refuses what it cannot verify, so a published asset is offered as stored. A synced asset exists before
 * its bytes are checked (the sync's plan records it, then downloads it), so with the key set it is offered only
 * once sync has mirrored its bytes and verified its signature against them (`mirrored` with a `signature`), never
 * by its upstream address meanwhile: that would hand out bytes nobody checked (and pull-through would then mirror
 * them as if they were). Without the key every asset is offered as before.
 */
import { assetSource } from "./classify";
import type { AssetSource } from "./release-types";

type Offerable = { remoteId?: number | null; mirrored: boolean; upstreamUrl: string | null; signature?: string | null };

export function isOffered(asset: Offerable, requireSignatures: boolean): boolean {
  if (!requireSignatures || asset.remoteId === null || asset.remoteId === undefined) return true;
  return asset.mirrored && Boolean(asset.signature);
}

/** The releases with only the assets offered (the same objects when every asset is). */
export function offeredReleases<R extends { assets: A[] }, A extends Offerable>(releases: R[], requireSignatures: boolean): R[] {
  if (!requireSignatures) return releases;
  return releases.map((r) => (r.assets.every((a) => isOffered(a, true)) ? r : { ...r, assets: r.assets.filter((a) => isOffered(a, true)) }));
}

/** How an asset is served while sync has not finished with it: as offered, or `withheld` from every document. */
export function servedMeanwhile(asset: Offerable, requireSignatures: boolean): AssetSource | "withheld" {
  return isOffered(asset, requireSignatures) ? assetSource(asset) : "withheld";
}
