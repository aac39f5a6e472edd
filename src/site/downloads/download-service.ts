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
import { contentDisposition, contentTypeFor } from "./rules/download-headers";
import { downloadNotModified } from "./download-revalidation";
import { DownloadTokenSigner, TOKEN_REASON_TEXT, isWellFormedToken, judgeToken } from "./download-tokens";
import { MintLimit } from "./mint-limit";
import type { MetaRepository } from "../../state/meta-repository";
import type { Mirror, MirrorObject } from "../releases/mirror";
import type { AssetRecord, ReleaseRepository } from "../releases/release-repository";
import type { DownloadRepository } from "./download-repository";
import { assetSource } from "../releases/rules/classify";
import { isOffered } from "../releases/rules/signed-offer";
import type { StorageReserve } from "../../state/storage-reserve";

export interface DownloadDeps {
  store: ReleaseRepository;
  tokens: DownloadRepository;
  mirror: Mirror;
  /** Where the download secret is kept (generated once, shared by every instance of a shared store). */
  meta: Pick<MetaRepository, "get" | "setIfAbsent">;
  config: Pick<Config, "downloadTokenTtlSeconds" | "downloadMintRpm">;
  now: () => number;
  fetch: typeof fetch;
  log: Logger;
  /**
   * GANTRY_RELEASE_PUBLIC_KEY is set: a synced asset not yet mirrored with a verified signature gets no link and
   * its links serve nothing (releases/signed-offer.ts), so unchecked bytes are never proxied or pulled through.
   */
  requireSignatures?: boolean;
  /** While free space is below the reserve kept for billing, downloads are served but not counted or mirrored. */
  storage?: Pick<StorageReserve, "short">;
}

const PURGE_EVERY_MS = 60_000;
/** Expired count records are deleted this many at a time, yielding to the event loop between batches. */
const PURGE_BATCH = 500;
/** The meta key of the download secret (32 random bytes, base64url): the HMAC key of every link. */
export const DOWNLOAD_SECRET_META_KEY = "download_link_secret";
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
  private purging = false;
  private signerP: Promise<DownloadTokenSigner> | null = null;
  private readonly mintLimit: MintLimit;

  constructor(private readonly deps: DownloadDeps) {
    this.mintLimit = new MintLimit(deps.config.downloadMintRpm);
  }

  /**
   * Mints a link for the asset, for the client at `client` (see download-tokens.ts); returns the token (the caller
   * builds the redirect). Writes nothing: a link needs no storage. Each client address may mint
   * `downloadMintRpm` a minute (429 beyond).
   */
  async issue(rawId: string, client: string): Promise<string> {
    const id = parseAssetId(rawId);
    const now0 = this.deps.now();
    const waitMs = this.mintLimit.take(client, now0);
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new AppError("too_many_requests", `Too many download links requested from this address; try again in ${seconds} s.`, {
        headers: { "retry-after": String(seconds) },
      });
    }
    const asset = await this.deps.store.getAsset(id);
    if (!asset) throw new AppError("not_found", `No asset ${id}.`, { param: "assetId" });
    if (!isOffered(asset, this.deps.requireSignatures === true)) {
      throw new AppError("not_found", `Asset ${id} cannot be downloaded: its signature has not been verified yet.`, { param: "assetId" });
    }
    if (assetSource(asset) === "unavailable") {
      throw new AppError("not_found", `Asset ${id} cannot be downloaded: it is neither mirrored nor available upstream.`, { param: "assetId" });
    }
    const now = this.deps.now();
    this.purgeNowAndThen(now);
    const signer = await this.signer();
    return signer.mint(asset.id, asset.sha256, client, now + this.deps.config.downloadTokenTtlSeconds * 1000);
  }

  async serve(request: Request, token: string, client: string): Promise<Response> {
    const { store, tokens } = this.deps;
    // Malformed tokens (traversal attempts included) never reach the database.
    if (!isWellFormedToken(token)) return errorResponse(new AppError("not_found", TOKEN_REASON_TEXT.unknown));
    const signer = await this.signer();
    const claims = signer.open(token, client);
    const found = claims ? await store.getAsset(claims.assetId) : null;
    // Withheld (not yet verified) reads as no longer there: the link names bytes not offered now.
    const asset = found && isOffered(found, this.deps.requireSignatures === true) ? found : null;
    const now = this.deps.now();
    this.purgeNowAndThen(now);
    const verdict = judgeToken(claims, asset?.sha256 ?? null, now);
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
    const windowMs = this.deps.config.downloadTokenTtlSeconds * 1000;
    const hooks = {
      // Links are no longer spent by a request (see download-tokens.ts): every request within the lifetime is served.
      consume: async () => true,
      count: (servesEnd = true) => {
        // Only an answer that reaches the file's last byte is a download (a probe or a middle segment is not), and
        // one client's requests for the same bytes within a link's lifetime count once, whatever links they used.
        if (!servesEnd || this.deps.storage?.short) return;
        tokens
          .countDownload(signer.countKey(a.id, a.sha256, client), a.id, this.deps.now(), windowMs)
          .catch((err) => this.deps.log.warn("download not counted", { assetId: a.id, error: (err as Error).message }));
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
        // Below the storage reserve the bytes are only passed on: a download must not fill what billing needs.
        pullThrough: this.deps.storage?.short ? undefined : this.pullThroughFor(a),
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
    const record = async ({ sha256, size, sha512, sha1 }: MirrorObject) => {
      // Only if the asset still names that upstream and nothing else mirrored it meanwhile.
      const now = await store.getAsset(asset.id);
      if (now && !now.mirrored && now.upstreamUrl === asset.upstreamUrl) await store.updateAsset(asset.id, { sha256, size, sha512, sha1, mirrored: true });
    };
    return {
      mirror: this.deps.mirror,
      stored: (obj) => void record(obj).catch((err) => log.warn("pulled-through asset not recorded", { assetId: asset.id, error: (err as Error).message })),
      failed: (err) => log.info("proxied download not mirrored", { assetId: asset.id, error: (err as Error).message }),
    };
  }

  private async learnSize(asset: AssetRecord, size: number): Promise<void> {
    if (asset.size === null && Number.isSafeInteger(size) && size >= 0) {
      await this.deps.store.updateAsset(asset.id, { size }).catch((err) => this.deps.log.warn("asset size not recorded", { assetId: asset.id, error: (err as Error).message }));
    }
  }

  /** The signer under the store's download secret: read once, generated by the first instance that needs it. */
  private signer(): Promise<DownloadTokenSigner> {
    this.signerP ??= (async () => {
      const { meta } = this.deps;
      let value = await meta.get(DOWNLOAD_SECRET_META_KEY);
      if (value === null) {
        const fresh = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
        await meta.setIfAbsent(DOWNLOAD_SECRET_META_KEY, fresh);
        value = await meta.get(DOWNLOAD_SECRET_META_KEY);
      }
      return new DownloadTokenSigner(new Uint8Array(Buffer.from(value!, "base64url")));
    })().catch((err) => {
      this.signerP = null;
      throw err;
    });
    return this.signerP;
  }

  /** Now and then, forgets expired count records, a small batch at a time so the event loop never stalls. */
  private purgeNowAndThen(now: number): void {
    if (this.purging || now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    this.purging = true;
    this.purgeExpired(now)
      .catch((err) => this.deps.log.warn("expired download records not purged", { error: (err as Error).message }))
      .finally(() => {
        this.purging = false;
      });
  }

  /** Deletes every record expired before `now`, in batches; returns how many. */
  async purgeExpired(now: number): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.deps.tokens.purgeTokens(now, PURGE_BATCH);
      total += n;
      if (n < PURGE_BATCH) return total;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}
