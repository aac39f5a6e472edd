/**
 * The two steps of a download: `/api/v1/download/{id}` mints a short-lived token and redirects to
 * `/dl/{token}`; `/dl/{token}` checks the token and serves the bytes from the mirror, else by proxy.
 */
import { holdConnection } from "../../http/connection-hold";
import type { Config } from "../../config";
import { AppError, errorResponse } from "../../errors";
import type { Logger } from "../../log";
import { serveFromUpstream } from "./download-proxy";
import type { PullThrough } from "./download-pull-through";
import { serveFromMirror } from "./download-serve";
import { contentDisposition, contentTypeFor } from "./download-headers";
import { downloadNotModified } from "../revalidation";
import { TOKEN_REASON_TEXT, isWellFormedToken, judgeToken, newDownloadToken, tokenStorageKey } from "./download-tokens";
import type { Mirror } from "./mirror";
import type { AssetRecord, ReleaseRepository } from "../releases/release-repository";
import type { DownloadRepository } from "./download-repository";
import { assetSource } from "../releases/classify";

export interface DownloadDeps {
  store: ReleaseRepository;
  tokens: DownloadRepository;
  mirror: Mirror;
  config: Pick<Config, "downloadTokenTtlSeconds">;
  now: () => number;
  fetch: typeof fetch;
  log: Logger;
}

/** Expired tokens are kept this long so they answer 410 rather than 404, then forgotten. */
const KEEP_EXPIRED_MS = 24 * 3_600_000;
const PURGE_EVERY_MS = 60_000;
/**
 * A presigned object-store link (GANTRY_S3_REDIRECT_DOWNLOADS) lives this long: enough to start the download
 * and to resume it after a short break (S3 checks the expiry when a request starts, not while it runs); short
 * enough that it is no lasting public link.
 */
const DIRECT_LINK_SECONDS = 300;

/** Path ids are positive safe integers; anything else (`-1`, `1e3`, `0x1`, 30 digits) is a 400. */
export function parseAssetId(raw: string): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id)) {
    throw new AppError("invalid_request", "assetId must be a positive integer.", { param: "assetId" });
  }
  return id;
}

export class DownloadService {
  private lastPurge = 0;

  constructor(private readonly deps: DownloadDeps) {}

  /** Mints a token for the asset; returns it (the caller builds the redirect). */
  async issue(rawId: string): Promise<string> {
    const id = parseAssetId(rawId);
    const asset = await this.deps.store.getAsset(id);
    if (!asset) throw new AppError("not_found", `No asset ${id}.`, { param: "assetId" });
    if (assetSource(asset) === "unavailable") {
      throw new AppError("not_found", `Asset ${id} cannot be downloaded: it is neither mirrored nor available upstream.`, { param: "assetId" });
    }
    const now = this.deps.now();
    this.purgeNowAndThen(now);
    const token = newDownloadToken();
    await this.deps.tokens.insertToken({
      tokenHash: tokenStorageKey(token),
      assetId: asset.id,
      sha256: asset.sha256,
      createdAt: now,
      expiresAt: now + this.deps.config.downloadTokenTtlSeconds * 1000,
    });
    return token;
  }

  async serve(request: Request, token: string): Promise<Response> {
    const { store, tokens } = this.deps;
    // Malformed tokens (traversal attempts included) never reach the database.
    if (!isWellFormedToken(token)) return errorResponse(new AppError("not_found", TOKEN_REASON_TEXT.unknown));
    const key = tokenStorageKey(token);
    const row = await tokens.getToken(key);
    const asset = row ? await store.getAsset(row.assetId) : null;
    const now = this.deps.now();
    const verdict = judgeToken(row, asset?.sha256 ?? null, now);
    if (!verdict.ok) {
      return errorResponse(new AppError(verdict.status === 404 ? "not_found" : "gone", TOKEN_REASON_TEXT[verdict.reason]));
    }
    const a = asset!;
    // A client that holds these bytes already gets a 304: no token spent, nothing counted.
    const unchanged = downloadNotModified(request, a.sha256);
    if (unchanged) return unchanged;
    // A live link: the transfer may take long (Bun's idle cut counts only what the client sends). The next request
    // on this connection starts with the cut on again.
    holdConnection(request);
    const hooks = {
      consume: () => tokens.consumeToken(key, this.deps.now()),
      count: () => {
        tokens.countDownloadOnce(key, a.id, this.deps.now()).catch((err) => this.deps.log.warn("download not counted", { assetId: a.id, error: (err as Error).message }));
      },
    };
    const meta = { name: a.name, fileType: a.fileType, sha256: a.sha256 };

    const file = a.mirrored && a.sha256 ? await this.deps.mirror.open(a.sha256) : null;
    if (file) {
      const sha = a.sha256;
      const direct = () =>
        this.deps.mirror.directUrl(sha, { contentDisposition: contentDisposition(a.name), contentType: contentTypeFor(a.fileType), expiresInSeconds: DIRECT_LINK_SECONDS });
      return serveFromMirror(request, file, meta, hooks, direct);
    }
    if (a.mirrored) this.deps.log.warn("mirrored bytes are missing; trying the upstream", { assetId: a.id, sha256: a.sha256 });
    if (a.upstreamUrl) {
      return serveFromUpstream(request, { ...meta, url: a.upstreamUrl, size: a.size }, hooks, {
        fetch: this.deps.fetch,
        learnSize: (size) => this.learnSize(a, size),
        pullThrough: this.pullThroughFor(a),
      });
    }
    return errorResponse(new AppError("not_found", "This file is no longer available."));
  }

  /** Downloads per UTC day for one asset, oldest first. */
  downloadsByDay(assetId: number): Promise<Array<{ day: string; count: number }>> {
    return this.deps.tokens.downloadsByDay(assetId);
  }

  /** Pull-through (download-pull-through.ts): a complete proxied pass lands in the mirror and the asset records it. */
  private pullThroughFor(asset: AssetRecord): PullThrough {
    const { store, log } = this.deps;
    const record = async ({ sha256, size }: { sha256: string; size: number }) => {
      // Only if the asset still names that upstream and nothing else mirrored it meanwhile.
      const now = await store.getAsset(asset.id);
      if (now && !now.mirrored && now.upstreamUrl === asset.upstreamUrl) await store.updateAsset(asset.id, { sha256, size, mirrored: true });
    };
    return {
      mirror: this.deps.mirror,
      stored: (obj) => void record(obj).catch((err) => log.warn("pulled-through asset not recorded", { assetId: asset.id, error: (err as Error).message })),
      failed: (err) => log.info("proxied download not mirrored", { assetId: asset.id, error: (err as Error).message }),
    };
  }

  private learnSize(asset: AssetRecord, size: number): void {
    if (asset.size === null && Number.isSafeInteger(size) && size >= 0) {
      this.deps.store.updateAsset(asset.id, { size }).catch((err) => this.deps.log.warn("asset size not recorded", { assetId: asset.id, error: (err as Error).message }));
    }
  }

  private purgeNowAndThen(now: number): void {
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    this.deps.tokens.purgeTokens(now - KEEP_EXPIRED_MS).catch((err) => this.deps.log.warn("expired download links not purged", { error: (err as Error).message }));
  }
}
