/**
 * One-time download links (kept as hashes) and the download counts they produce: the downloads feature's port.
 * The embedded default is SQLite (store/sqlite/downloads.ts). Consuming a link and counting a download are
 * each decided atomically, so two requests racing for one link get one winner, on any backend.
 */
export interface TokenRecord {
  tokenHash: string;
  assetId: number;
  sha256: string;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
  counted: boolean;
}

export interface DownloadRepository {
  insertToken(t: Omit<TokenRecord, "consumedAt" | "counted">): Promise<void>;
  getToken(tokenHash: string): Promise<TokenRecord | null>;
  /** Marks the token used; false when another request got there first. */
  consumeToken(tokenHash: string, at: number): Promise<boolean>;
  /**
   * Counts one download for the asset the first time a GET served bytes through the token (a client fetching a
   * file in many ranges counts once). Returns whether this call counted.
   */
  countDownloadOnce(tokenHash: string, assetId: number, at: number): Promise<boolean>;
  /** Forgets tokens that expired before `before`; returns how many. */
  purgeTokens(before: number): Promise<number>;
  /** Downloads per UTC day (`YYYY-MM-DD`) for one asset, oldest first. */
  downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>>;
}
