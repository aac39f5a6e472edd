/**
 * Builders of GET /api/v1/latest (`app.latest.v1`) and of the legacy GET /update/latest.json, plus the
 * choice of "the latest release". Pure: the route loads releases and passes the base URL in.
 */
import { AppError } from "../../../errors";
import { assetSource, markRecommended, normalizeArch, normalizeFileType, normalizePlatform, pickWebZip } from "./classify";
import type { Arch, Asset, AssetSource, AssetWithRecommendation, LatestQuery, Platform, Release } from "./release-types";
import { compareVersions, isPrerelease, isValidVersion, normalizeVersion } from "./versions";
import { readParam } from "../../http/rules/query-params";
import { isFullyRolledOut, rolloutOffers } from "./rollout";

export interface SiteContext {
  /** Scheme and host the site was reached by, e.g. `https://updates.example.com`; a trailing `/` is ignored. */
  baseUrl: string;
  heartbeatIntervalSeconds: number;
  onlineWindowSeconds: number;
}

export interface LatestAsset {
  id: number;
  name: string;
  platform: Platform | "";
  arch: Arch | "";
  fileType: string;
  /** `sha256:<hex>`, or "" while the digest is unknown. */
  sha256: string;
  size: number | null;
  source: AssetSource;
  /** "" exactly when `source` is `unavailable`. */
  downloadUrl: string;
  recommended: boolean;
  /** The asset's minisign signature file, base64-encoded as in Tauri's latest.json; absent when it has none. */
  signature?: string;
}

export interface LatestDocument {
  schema: "app.latest.v1";
  /** "" when no release is published yet. */
  version: string;
  publishedAt: string;
  notes: string;
  minAppVersion: string;
  assets: LatestAsset[];
  download: {
    /** Substitute `{assetId}`; the URL answers 302 to a short-lived `/dl/{token}` that must be followed. */
    urlTemplate: string;
    /** The recommended assets among `assets`, for a download button per platform/arch. */
    recommended: Array<Pick<LatestAsset, "id" | "name" | "platform" | "arch" | "fileType" | "downloadUrl">>;
  };
  /**
   * The legacy manifest (/update/latest.json), or null when it would answer 404: no downloadable web-*.zip
   * offered to clients outside every rollout group. Never a link that answers 404.
   */
  manifest: { url: string } | null;
  heartbeat: {
    url: string;
    method: "POST";
    clientIdHeader: "X-App-Client-ID";
    intervalSeconds: number;
    onlineWindowSeconds: number;
  };
}

export interface LegacyManifest {
  version: string;
  name: string;
  url: string;
  /** Plain lowercase hex SHA-256, as Capgo-style updaters compare it; "" while unknown. */
  hash: string;
  /** The same digest in the `sha256:` form of the v1 API, so the algorithm is explicit. */
  sha256: string;
  size: number | null;
  minAppVersion: string;
  notes: string;
  pubDate: string;
  /** The zip's minisign signature file, base64-encoded (as `signature` in /api/v1/latest); absent when none. */
  signature?: string;
}

/** A signature file's text as the documents give it: base64, as Tauri's latest.json carries `.sig` contents. */
function signatureForDocument(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

function trimBase(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "");
}

export function downloadUrlFor(baseUrl: string, assetId: number): string {
  return `${trimBase(baseUrl)}/api/v1/download/${assetId}`;
}

function hexDigest(sha256: string): string {
  const hex = sha256.trim().toLowerCase().replace(/^sha256:/, "");
  return /^[0-9a-f]{64}$/.test(hex) ? hex : "";
}

function prefixedDigest(sha256: string): string {
  const hex = hexDigest(sha256);
  return hex ? `sha256:${hex}` : "";
}

function isPrereleaseRelease(r: Release): boolean {
  return r.prerelease || isPrerelease(r.version);
}

/** Newest first: version, then publish date, then id (two tags can spell one version, `v1.2` and `1.2.0`). */
function newestFirst(a: Release, b: Release): number {
  const byVersion = compareVersions(b.version, a.version);
  if (byVersion !== 0) return byVersion;
  const ta = Date.parse(a.publishedAt) || 0;
  const tb = Date.parse(b.publishedAt) || 0;
  if (ta !== tb) return tb - ta;
  return b.id - a.id;
}

/**
 * The releases eligible as "latest", newest first. Releases with unparsable versions never qualify, and
 * pre-releases (flag or `-suffix`) only with `includePrerelease`, so a stable client is never offered a beta.
 */
export function rankReleases(releases: readonly Release[], opts: { includePrerelease?: boolean } = {}): Release[] {
  return releases
    .filter((r) => isValidVersion(r.version) && (opts.includePrerelease || !isPrereleaseRelease(r)))
    .sort(newestFirst);
}

export function pickLatestRelease(
  releases: readonly Release[],
  opts: { includePrerelease?: boolean } = {},
): Release | null {
  return rankReleases(releases, opts)[0] ?? null;
}

/** Some filter of the query is set (platform, arch or file type). */
export function isFilteredQuery(q: LatestQuery): boolean {
  return Boolean(q.platform || q.arch || q.fileType);
}

/** The release has an asset that matches the filters and has bytes to serve (mirrored or proxied). */
export function hasDownloadFor(release: Release, q: LatestQuery): boolean {
  return release.assets.some((a) => matches(a, q) && assetSource(a) !== "unavailable");
}

/**
 * The release /api/v1/latest answers for this query. Without filters: the latest release. With filters: the
 * newest eligible release that has something to download for them (a matching asset that is not
 * `unavailable`), so a release published for one platform never hides the previous one of another; null
 * when no release has (the document is then the empty one, like before the first release).
 */
export function pickLatestFor(
  releases: readonly Release[],
  query: LatestQuery,
  opts: { includePrerelease?: boolean; clientId?: string | null } = {},
): Release | null {
  return chooseVariant(planLatest(releases, query, opts), opts.clientId ?? null);
}

/**
 * What a document may answer, before knowing the client: `base` is the newest release offered to everyone
 * (fully rolled out, not yanked), `staged` the newer releases in a staged rollout (newest first, percentage
 * above 0), which only clients with an id in their group get. `staged` is empty in the common case, and then
 * no client needs any work.
 */
export interface LatestPlan {
  staged: Release[];
  base: Release | null;
}

/** The plan of /api/v1/latest for this query (filters as in pickLatestFor; yanked releases never count). */
export function planLatest(releases: readonly Release[], query: LatestQuery, opts: { includePrerelease?: boolean } = {}): LatestPlan {
  const filtered = isFilteredQuery(query);
  return planOver(rankReleases(releases, opts), (r) => !filtered || hasDownloadFor(r, query));
}

/** The plan over releases ranked newest first, of those `usable` says may answer. */
export function planOver(ranked: readonly Release[], usable: (r: Release) => boolean): LatestPlan {
  const staged: Release[] = [];
  for (const r of ranked) {
    if (r.yanked || !usable(r)) continue;
    if (isFullyRolledOut(r)) return { staged, base: r };
    if ((r.rolloutPercent ?? 100) > 0) staged.push(r);
  }
  return { staged, base: null };
}

/**
 * The release this client is offered: the newest staged one offered to it (its group's, and while paused only
 * if `reported`, the version of its last heartbeat, says it runs it already), else the base.
 */
export function chooseVariant(plan: LatestPlan, clientId: string | null, reported: string | null = null): Release | null {
  if (clientId !== null) {
    for (const r of plan.staged) if (rolloutOffers(r, clientId, reported)) return r;
  }
  return plan.base;
}

/**
 * Query of GET /api/v1/latest. Empty values count as absent; an unknown value is a 400 rather than a filter
 * that silently matches everything (or nothing). Aliases are accepted (`darwin`, `aarch64`, `appimage`).
 */
export function parseLatestQuery(raw: Record<string, unknown>): LatestQuery {
  const query: LatestQuery = {};
  const platform = readParam(raw, "platform");
  if (platform) {
    const p = normalizePlatform(platform);
    if (!p) throw badParam("platform", platform, "windows, macos, linux, web");
    query.platform = p;
  }
  const arch = readParam(raw, "arch");
  if (arch) {
    const a = normalizeArch(arch);
    if (!a) throw badParam("arch", arch, "x64, arm64, x86, universal");
    query.arch = a;
  }
  const fileType = readParam(raw, "file_type");
  if (fileType) {
    const t = normalizeFileType(fileType);
    if (!t) throw badParam("file_type", fileType, "exe, msi, dmg, AppImage, deb, rpm, zip, tar.gz, ...");
    query.fileType = t;
  }
  return query;
}


function badParam(name: string, value: string, allowed: string): AppError {
  return new AppError("invalid_request", `Unknown ${name} '${value.slice(0, 64)}'; expected one of: ${allowed}.`, {
    param: name,
  });
}

function matches(a: Pick<Asset, "platform" | "arch" | "fileType">, q: LatestQuery): boolean {
  if (q.platform && a.platform !== q.platform) return false;
  // A universal build runs on every arch, so it answers any arch filter.
  if (q.arch && a.arch !== q.arch && a.arch !== "universal") return false;
  if (q.fileType && a.fileType !== q.fileType) return false;
  return true;
}

function toLatestAsset(a: AssetWithRecommendation, baseUrl: string): LatestAsset {
  const source = assetSource(a);
  return {
    id: a.id,
    name: a.name,
    platform: a.platform,
    arch: a.arch,
    fileType: a.fileType,
    sha256: prefixedDigest(a.sha256),
    size: a.size,
    source,
    downloadUrl: source === "unavailable" ? "" : downloadUrlFor(baseUrl, a.id),
    recommended: a.recommended,
    ...(a.signature ? { signature: signatureForDocument(a.signature) } : {}),
  };
}

/**
 * No release yet still yields a full document (version "", no assets): clients need the heartbeat settings
 * before the first release exists, so the route answers 200 rather than 404.
 */
export function buildLatestDocument(
  release: Release | null,
  query: LatestQuery,
  ctx: SiteContext,
  /** Whether /update/latest.json answers 200 (see LatestDocument.manifest); the caller knows its releases. */
  manifestServed = true,
): LatestDocument {
  const base = trimBase(ctx.baseUrl);
  const assets = release
    ? markRecommended(release.assets)
        .filter((a) => matches(a, query))
        .map((a) => toLatestAsset(a, base))
    : [];
  return {
    schema: "app.latest.v1",
    version: release ? normalizeVersion(release.version) : "",
    publishedAt: release?.publishedAt ?? "",
    notes: release?.notes ?? "",
    minAppVersion: release ? normalizeVersion(release.minAppVersion) : "",
    assets,
    download: {
      urlTemplate: `${base}/api/v1/download/{assetId}`,
      recommended: assets
        .filter((a) => a.recommended)
        .map(({ id, name, platform, arch, fileType, downloadUrl }) => ({ id, name, platform, arch, fileType, downloadUrl })),
    },
    manifest: manifestServed ? { url: `${base}/update/latest.json` } : null,
    heartbeat: {
      url: `${base}/api/v1/client/heartbeat`,
      method: "POST",
      clientIdHeader: "X-App-Client-ID",
      intervalSeconds: ctx.heartbeatIntervalSeconds,
      onlineWindowSeconds: ctx.onlineWindowSeconds,
    },
  };
}

/**
 * The newest downloadable `web-*.zip` across releases (a desktop-only release does not hide the previous web
 * bundle; a zip with no bytes to serve is skipped rather than advertised with an empty URL). null = none;
 * pre-releases are skipped unless asked for, as for /api/v1/latest; yanked releases never count, and a release
 * in a staged rollout only for a client in its group.
 */
export function buildLegacyManifest(
  releases: readonly Release[],
  ctx: Pick<SiteContext, "baseUrl">,
  opts: { includePrerelease?: boolean; clientId?: string | null } = {},
): LegacyManifest | null {
  return buildLegacyManifestOf(chooseVariant(planLegacyManifest(releases, opts), opts.clientId ?? null), ctx);
}

/** The plan of /update/latest.json: releases with a downloadable web zip. */
export function planLegacyManifest(releases: readonly Release[], opts: { includePrerelease?: boolean } = {}): LatestPlan {
  return planOver(rankReleases(releases, opts), (r) => pickWebZip(r.assets) !== undefined);
}

/** The manifest of this release's web zip (null: no release, or none with a zip). */
export function buildLegacyManifestOf(release: Release | null, ctx: Pick<SiteContext, "baseUrl">): LegacyManifest | null {
  const zip = release ? pickWebZip(release.assets) : null;
  if (!release || !zip) return null;
  const hex = hexDigest(zip.sha256);
  return {
    version: normalizeVersion(release.version),
    name: zip.name,
    url: downloadUrlFor(ctx.baseUrl, zip.id),
    hash: hex,
    sha256: hex ? `sha256:${hex}` : "",
    size: zip.size,
    minAppVersion: normalizeVersion(release.minAppVersion),
    notes: release.notes,
    pubDate: release.publishedAt,
    ...(zip.signature ? { signature: signatureForDocument(zip.signature) } : {}),
  };
}
