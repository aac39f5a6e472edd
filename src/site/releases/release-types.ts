/**
 * Shapes of the release documents that are not stored rows (those are the repository port's, release-repository.ts).
 */
import type { Arch, Asset, Platform } from "./release-repository";

export type AssetWithRecommendation = Asset & { recommended: boolean };

/** Filters of GET /api/v1/latest after normalisation; absent = no filter. */
export interface LatestQuery {
  platform?: Platform;
  arch?: Arch;
  fileType?: string;
}
