/**
 * Download counts, and the record that keeps one client's download from counting twice: the downloads feature's
 * port. Links themselves need no storage (they are signed, see download-tokens.ts). The embedded default is SQLite
 * (store/sqlite/downloads.ts). Counting is decided atomically, so requests racing to count one download get one
 * winner, on any backend.
 */
export interface DownloadRepository {
  /**
   * Counts one download of `assetId` on the UTC day of `at`, unless one was counted under `countKey` (a keyed
   * digest naming one client's download of the asset's bytes) within the last `windowMs`. Returns whether this
   * call counted. The record it leaves expires `windowMs` after `at`.
   */
  countDownload(countKey: string, assetId: number, at: number, windowMs: number): Promise<boolean>;
  /** Forgets at most `limit` records that expired before `before`; returns how many (call again while it is `limit`). */
  purgeTokens(before: number, limit: number): Promise<number>;
  /** Downloads per UTC day (`YYYY-MM-DD`) for one asset, oldest first. */
  downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>>;
}
