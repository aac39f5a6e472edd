/**
 * The download address the updater feeds give for an asset (pure): `/update/files/{assetId}/{name}`, served like
 * /api/v1/download/{assetId} (a 302 to a short-lived, counted, resumable `/dl/` link: mirror, S3 or proxy as
 * today). The file name ends the path because updaters read it from the URL: electron-updater picks a macOS zip
 * by `arm64` in it and finds a blockmap at `URL.blockmap`; Squirrel names packages by it.
 */
import type { Asset } from "../../releases/release-repository";

export function updateFileUrl(baseUrl: string, asset: Pick<Asset, "id" | "name">): string {
  return `${baseUrl.replace(/\/+$/, "")}/update/files/${asset.id}/${encodeURIComponent(asset.name)}`;
}
