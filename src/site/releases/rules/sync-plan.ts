/**
 * What a sync changes locally, decided from the local releases and the remote list (pure).
 *
 * Rules (decisions where the issue is silent are marked):
 * - Drafts are skipped; pre-releases only with `includePrereleases`; tags that are not versions are skipped
 *   and reported (a junk tag must never become "latest").
 * - A remote release matches a local one by GitHub id, else by version (`v1.2.0` = `1.2.0`).
 * - Releases sync created (origin github) follow the remote: notes, date, pre-release flag.
 *   Decision: a release the operator published by hand is never rewritten by sync; sync only adds the
 *   remote assets it lacks (by name).
 * - `minAppVersion` is never written on an existing release. Decision: a release created by sync inherits
 *   the value of the nearest lower existing release, so an operator's floor carries forward; sync never
 *   invents or raises one.
 * - An asset is (re)downloaded when it is new, or when the remote says its bytes changed (id, update time,
 *   size or digest differ) and the digest is not already the one we hold. Until then the old bytes are
 *   served. Operator classification overrides are kept.
 * - Decision: nothing is deleted by sync (a release or asset removed upstream stays here until the operator
 *   deletes it), so a remote mistake can never take downloads away.
 * - A remote asset named `NAME.minisig` (else `NAME.sig`) is NAME's signature, not an asset: NAME records where to
 *   fetch it from. Decision: one with no NAME beside it is ignored (a signature alone is nothing to download). A
 *   new signature upstream (another asset id) has NAME fetched and checked again, as new bytes would.
 */
import { classifyAsset } from "./classify";
import { sanitizeFileName } from "./asset-file-name";
import { isHttpUrl } from "../../fetch/rules/http-url";
import type { AssetFields, AssetRecord, NewRelease, ReleaseBatchItem, ReleaseChanges, ReleaseRecord } from "./release-types";
import type { GitHubAsset, GitHubRelease } from "./github-types";
import { compareVersions, isValidVersion, versionKey } from "./versions";

/** What the plan does to one release: the repository's batch item (applied by `applyBatch` in one step). */
export type PlannedRelease = ReleaseBatchItem;
export type PlannedAsset = ReleaseBatchItem["assets"][number];

export interface SyncPlan {
  releases: PlannedRelease[];
  skipped: Array<{ tag: string; reason: string }>;
}

export function planSync(
  local: readonly ReleaseRecord[],
  remote: readonly GitHubRelease[],
  options: { includePrereleases: boolean; nowIso: string },
): SyncPlan {
  const skipped: SyncPlan["skipped"] = [];
  const byRemoteId = new Map(local.filter((r) => r.remoteId !== null).map((r) => [r.remoteId!, r]));
  const byKey = new Map(local.map((r) => [versionKey(r.version), r]));
  const seenKeys = new Set<string>();

  const wanted = remote.filter((r) => {
    if (r.draft) return false;
    if (r.prerelease && !options.includePrereleases) {
      skipped.push({ tag: r.tag_name, reason: "pre-release (pass --prereleases to include)" });
      return false;
    }
    if (!isValidVersion(r.tag_name)) {
      skipped.push({ tag: r.tag_name, reason: "tag is not a version" });
      return false;
    }
    const key = versionKey(r.tag_name);
    if (seenKeys.has(key)) {
      skipped.push({ tag: r.tag_name, reason: "another tag names the same version" });
      return false;
    }
    seenKeys.add(key);
    return true;
  });

  // Oldest first, so a release created here can inherit minAppVersion from one created just before it.
  wanted.sort((a, b) => compareVersions(a.tag_name, b.tag_name));
  const floors = local.map((r) => ({ version: r.version, minAppVersion: r.minAppVersion }));

  const releases: PlannedRelease[] = [];
  for (const r of wanted) {
    const match = byRemoteId.get(r.id) ?? byKey.get(versionKey(r.tag_name)) ?? null;
    const publishedAt = isoOr(r.published_at, isoOr(r.created_at, options.nowIso));
    if (!match) {
      const minAppVersion = inheritedFloor(floors, r.tag_name);
      floors.push({ version: r.tag_name, minAppVersion });
      releases.push({
        version: r.tag_name,
        existingId: null,
        create: {
          version: r.tag_name,
          notes: r.body ?? "",
          publishedAt,
          minAppVersion,
          prerelease: r.prerelease,
          origin: "github",
          remoteId: r.id,
        },
        update: {},
        assets: planAssets([], r.assets, false),
      });
      continue;
    }
    const update: ReleaseChanges = {};
    if (match.remoteId !== r.id) update.remoteId = r.id;
    if (match.origin === "github") {
      if (match.notes !== (r.body ?? "")) update.notes = r.body ?? "";
      if (match.publishedAt !== publishedAt) update.publishedAt = publishedAt;
      if (match.prerelease !== r.prerelease) update.prerelease = r.prerelease;
    }
    releases.push({
      version: match.version,
      existingId: match.id,
      create: null,
      update,
      assets: planAssets(match.assets, r.assets, match.origin === "manual"),
    });
  }
  return { releases, skipped };
}

function inheritedFloor(floors: ReadonlyArray<{ version: string; minAppVersion: string }>, version: string): string {
  let best: { version: string; minAppVersion: string } | null = null;
  for (const f of floors) {
    if (compareVersions(f.version, version) >= 0) continue;
    if (!best || compareVersions(f.version, best.version) > 0) best = f;
  }
  return best?.minAppVersion ?? "";
}

function isoOr(value: string | null | undefined, fallback: string): string {
  const ms = value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? fallback : new Date(ms).toISOString();
}

function validDigest(digest: string | null | undefined): string | null {
  const hex = (digest ?? "").trim().toLowerCase();
  return /^sha256:[0-9a-f]{64}$/.test(hex) ? hex : null;
}

const SIGNATURE_SUFFIXES = [".minisig", ".sig"] as const;

/**
 * Splits a release's remote assets into assets and their signatures: `NAME.minisig`, else `NAME.sig`, uploaded
 * beside `NAME`. Every `.minisig` / `.sig` is left out of the assets, paired or not. Uploads still in progress
 * (GitHub's state "starter": no bytes yet) are neither.
 */
export function pairSignatures(remote: readonly GitHubAsset[]): { assets: GitHubAsset[]; signatureOf: Map<string, GitHubAsset> } {
  const uploaded = remote.filter((a) => !a.state || a.state === "uploaded");
  const byName = new Map<string, GitHubAsset>();
  for (const a of uploaded) if (!byName.has(a.name)) byName.set(a.name, a);
  const isSignature = (a: GitHubAsset) => SIGNATURE_SUFFIXES.some((suffix) => a.name.length > suffix.length && a.name.endsWith(suffix));
  const assets = uploaded.filter((a) => !isSignature(a));
  const signatureOf = new Map<string, GitHubAsset>();
  for (const a of assets) {
    for (const suffix of SIGNATURE_SUFFIXES) {
      const sig = byName.get(a.name + suffix);
      if (sig) {
        signatureOf.set(a.name, sig);
        break;
      }
    }
  }
  return { assets, signatureOf };
}

function planAssets(local: readonly AssetRecord[], remote: readonly GitHubAsset[], addOnly: boolean): PlannedAsset[] {
  const out: PlannedAsset[] = [];
  const names = new Set<string>();
  const { assets, signatureOf } = pairSignatures(remote);
  for (const a of assets) {
    const name = sanitizeFileName(a.name);
    if (!name || names.has(name)) continue;
    names.add(name);
    const existing = local.find((l) => l.remoteId === a.id) ?? local.find((l) => l.name === name) ?? null;
    if (existing && addOnly) continue;

    const digest = validDigest(a.digest);
    const sig = signatureOf.get(a.name);
    const remoteFields: AssetFields = {
      upstreamUrl: isHttpUrl(a.browser_download_url ?? "") ? a.browser_download_url : null,
      remoteId: a.id,
      remoteApiUrl: isHttpUrl(a.url) ? a.url : null,
      remoteUpdatedAt: a.updated_at ?? null,
      remoteDigest: digest,
      remoteSize: a.size,
      signatureUrl: sig && isHttpUrl(sig.browser_download_url ?? "") ? sig.browser_download_url : null,
      signatureApiUrl: sig && isHttpUrl(sig.url) ? sig.url : null,
    };
    if (!existing) {
      out.push({
        name,
        existingId: null,
        fields: { ...classifyAsset(name), ...remoteFields, size: a.size, sha256: "", mirrored: false, mirrorPending: true },
      });
      continue;
    }
    const changed =
      existing.remoteId !== a.id ||
      existing.remoteUpdatedAt !== (a.updated_at ?? null) ||
      existing.remoteSize !== a.size ||
      existing.remoteDigest !== digest;
    const alreadyHeld = existing.mirrored && digest !== null && digest === `sha256:${existing.sha256}`;
    // A signature uploaded (or replaced: a new asset id, so a new API address) since the bytes were mirrored.
    const newSignature = remoteFields.signatureApiUrl !== null && remoteFields.signatureApiUrl !== existing.signatureApiUrl;
    const fields: AssetFields = { ...remoteFields };
    if (!existing.classifiedByOperator) Object.assign(fields, classifyAsset(existing.name));
    // While old bytes are served, `size` must stay theirs; it follows the remote only when nothing is mirrored.
    if (!existing.mirrored) fields.size = a.size;
    if ((changed && !alreadyHeld) || newSignature) fields.mirrorPending = true;
    out.push({ name: existing.name, existingId: existing.id, fields });
  }
  return out;
}
