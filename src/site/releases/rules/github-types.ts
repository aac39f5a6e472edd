/**
 * A release and its assets as GitHub's API (or a compatible one) returns them: what sync-github.ts reads and the
 * sync plan (sync-plan.ts) turns into changes.
 */
export interface GitHubAsset {
  id: number;
  name: string;
  size: number;
  /** API address: with `Accept: application/octet-stream` it redirects to (or streams) the bytes. */
  url: string;
  browser_download_url: string;
  updated_at?: string | null;
  /** `sha256:<hex>` on assets uploaded since mid-2025. */
  digest?: string | null;
  content_type?: string;
  state?: string;
}

export interface GitHubRelease {
  id: number;
  tag_name: string;
  name?: string | null;
  body?: string | null;
  draft: boolean;
  prerelease: boolean;
  published_at?: string | null;
  created_at?: string | null;
  assets: GitHubAsset[];
}
