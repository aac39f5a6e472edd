/**
 * The operator's release operations, shared by `gantry releases` and /admin/api/releases: publish (local
 * files copied into the mirror, or `NAME=URL` assets), update, classify, delete. Validation lives here so
 * both front ends refuse the same input with the same message.
 *
 * Decisions where the issue is silent:
 * - Publishing a version that exists adds the given assets to it (an asset of the same name is replaced)
 *   and changes notes / minAppVersion only when given, so per-platform CI jobs can publish one release
 *   piece by piece. The admin API's POST is stricter (409 on an existing version; use its asset routes).
 * - Every file is checked before anything is written, and the release rows are written in one
 *   transaction after all bytes are in the mirror: a failed publish leaves no half release behind.
 * - Mirror bytes no asset refers to any more are removed.
 */
import { statSync } from "node:fs";
import { basename } from "node:path";
import type { MinisignPublicKey } from "../../minisign-key";
import { readSignatureBeside, signatureToKeep, signaturesOf } from "./publish-signatures";
import { AppError } from "../../errors";
import { NO_DIGESTS, storedFields } from "./asset-digests";
import { classifyAsset, normalizeArch, normalizeFileType, normalizePlatform } from "./rules/classify";
import { sanitizeFileName } from "./rules/asset-file-name";
import { isHttpUrl } from "../fetch/rules/http-url";
import type { Mirror, MirrorObject } from "./mirror";
import type { AssetFields, AssetRecord, ReleaseChanges, ReleasePut, ReleaseRecord, ReleaseRepository } from "./release-repository";
import type { Arch, Platform } from "./rules/release-types";
import { isValidVersion } from "./rules/versions";
import { isRolloutPercent } from "./rules/rollout";

/** An asset held here by hand (published or uploaded): nothing to do with a remote, nothing left to mirror. */
const NOT_SYNCED = {
  remoteId: null,
  remoteApiUrl: null,
  remoteUpdatedAt: null,
  remoteDigest: null,
  remoteSize: null,
  mirrorError: null,
  mirrorPending: false,
  signatureUrl: null,
  signatureApiUrl: null,
} as const;

export type PublishSource = (
  | { kind: "file"; path: string; name: string }
  /** `url` "" = known by name only: listed as unavailable. */
  | { kind: "url"; name: string; url: string }
) & {
  /** Given by the operator (publish --platform/--arch: publish-platform.ts); kept like a `classify`. */
  classification?: Pick<AssetFields, "platform" | "arch">;
};

export interface ReleaseMeta {
  notes?: string;
  minAppVersion?: string;
  prerelease?: boolean;
  /** ISO 8601; default now. */
  publishedAt?: string;
  /** Staged rollout: the share of client ids offered the release, an integer 0..100 (default 100). */
  rolloutPercent?: number;
}

export interface Classification {
  platform?: string;
  arch?: string;
  fileType?: string;
}

const MAX_VERSION_NOTES = 100_000;

export function checkVersion(version: string, param = "version"): string {
  const v = version.trim();
  if (!isValidVersion(v)) {
    throw new AppError("invalid_request", `'${v.slice(0, 64)}' is not a version (dotted numbers, optional leading v, optional -prerelease).`, { param });
  }
  return v;
}

/** Validates and normalises release metadata; undefined fields stay undefined. */
export function checkReleaseMeta(meta: ReleaseMeta): ReleaseMeta {
  const out: ReleaseMeta = {};
  if (meta.notes !== undefined) {
    if (meta.notes.length > MAX_VERSION_NOTES) throw new AppError("invalid_request", "Notes are too long.", { param: "notes" });
    out.notes = meta.notes;
  }
  if (meta.minAppVersion !== undefined) {
    out.minAppVersion = meta.minAppVersion.trim() === "" ? "" : checkVersion(meta.minAppVersion, "minAppVersion");
  }
  if (meta.prerelease !== undefined) out.prerelease = meta.prerelease;
  if (meta.publishedAt !== undefined) {
    const ms = Date.parse(meta.publishedAt);
    if (Number.isNaN(ms)) throw new AppError("invalid_request", "publishedAt must be an ISO 8601 date-time.", { param: "publishedAt" });
    out.publishedAt = new Date(ms).toISOString();
  }
  if (meta.rolloutPercent !== undefined) out.rolloutPercent = checkRolloutPercent(meta.rolloutPercent);
  return out;
}

export function checkRolloutPercent(p: unknown, param = "rolloutPercent"): number {
  const n = typeof p === "string" && /^\s*\d+\s*%?\s*$/.test(p) ? Number.parseInt(p, 10) : p;
  if (!isRolloutPercent(n)) throw new AppError("invalid_request", "A rollout percentage is a whole number from 0 to 100.", { param });
  return n;
}

export function checkAssetName(name: string, param = "name"): string {
  const clean = sanitizeFileName(name);
  if (!clean) throw new AppError("invalid_request", "An asset needs a file name.", { param });
  return clean;
}

export function checkUpstreamUrl(url: string, param = "url"): string {
  const u = url.trim();
  if (u !== "" && !isHttpUrl(u)) throw new AppError("invalid_request", "An asset address must be an http(s) URL (or empty).", { param });
  return u;
}

/**
 * A publish argument: `NAME=URL` (URL http(s) or empty) or a local path. A path may itself contain `=`, so
 * only a value that is empty or looks like a URL makes it a `NAME=URL` pair.
 */
export function parsePublishArgument(arg: string): PublishSource {
  const m = /^([^=/\\]+)=(.*)$/.exec(arg);
  if (m && (m[2].trim() === "" || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(m[2].trim()))) {
    return { kind: "url", name: checkAssetName(m[1]), url: checkUpstreamUrl(m[2]) };
  }
  return { kind: "file", path: arg, name: checkAssetName(basename(arg)) };
}

/** Operator classification: each given value must be one we know (aliases accepted). */
export function checkClassification(c: Classification): Pick<AssetFields, "platform" | "arch" | "fileType"> {
  const out: Pick<AssetFields, "platform" | "arch" | "fileType"> = {};
  if (c.platform !== undefined) {
    const p = c.platform.trim() === "" ? "" : normalizePlatform(c.platform);
    if (p === null) throw new AppError("invalid_request", `Unknown platform '${c.platform.slice(0, 32)}'.`, { param: "platform" });
    out.platform = p as Platform | "";
  }
  if (c.arch !== undefined) {
    const a = c.arch.trim() === "" ? "" : normalizeArch(c.arch);
    if (a === null) throw new AppError("invalid_request", `Unknown arch '${c.arch.slice(0, 32)}'.`, { param: "arch" });
    out.arch = a as Arch | "";
  }
  if (c.fileType !== undefined) {
    const t = c.fileType.trim() === "" ? "" : normalizeFileType(c.fileType);
    if (t === null) throw new AppError("invalid_request", `Unknown file type '${c.fileType.slice(0, 32)}'.`, { param: "fileType" });
    out.fileType = t;
  }
  return out;
}

export class ReleaseCatalog {
  constructor(
    private readonly store: ReleaseRepository,
    private readonly mirror: Mirror,
    private readonly now: () => number,
    /** GANTRY_RELEASE_PUBLIC_KEY: when set, every published file must carry a good signature. */
    private readonly publicKey: MinisignPublicKey | null = null,
  ) {}

  async find(version: string): Promise<ReleaseRecord> {
    const r = await this.store.get(version);
    if (!r) throw new AppError("not_found", `No release '${version.slice(0, 64)}'.`, { param: "version" });
    return r;
  }

  findAsset(release: ReleaseRecord, idOrName: string): AssetRecord {
    const a = /^\d+$/.test(idOrName)
      ? release.assets.find((x) => String(x.id) === idOrName)
      : release.assets.find((x) => x.name === idOrName);
    if (!a) throw new AppError("not_found", `Release ${release.version} has no asset '${idOrName.slice(0, 64)}'.`);
    return a;
  }

  /** Creates the release (error if `mustBeNew` and it exists) with the given metadata; no assets. */
  async create(version: string, meta: ReleaseMeta, mustBeNew: boolean): Promise<ReleaseRecord> {
    const put = this.releasePut(checkVersion(version), checkReleaseMeta(meta));
    if (!mustBeNew) return this.store.put(put);
    const created = await this.store.create(put.create);
    if (created) return created;
    const existing = await this.store.get(put.create.version);
    throw new AppError("conflict", `Release ${existing?.version ?? put.create.version} exists already.`, { param: "version" });
  }

  /** A new release from the metadata given (published now unless said), or the changes it makes to an existing one. */
  private releasePut(version: string, m: ReturnType<typeof checkReleaseMeta>): ReleasePut {
    return {
      create: {
        version,
        notes: m.notes,
        minAppVersion: m.minAppVersion,
        prerelease: m.prerelease,
        publishedAt: m.publishedAt ?? new Date(this.now()).toISOString(),
        rolloutPercent: m.rolloutPercent,
      },
      change: m as ReleaseChanges,
    };
  }

  /** `gantry releases publish`: see the decisions at the top of this file. */
  async publish(version: string, sources: PublishSource[], meta: ReleaseMeta = {}): Promise<ReleaseRecord> {
    const v = checkVersion(version);
    const m = checkReleaseMeta(meta);
    if (m.rolloutPercent !== undefined) {
      const existing = await this.store.get(v);
      if (existing) this.checkRolloutChange(existing, m.rolloutPercent);
    }
    const names = new Set<string>();
    for (const s of sources) {
      if (names.has(s.name)) throw new AppError("invalid_request", `Two assets are named '${s.name}'.`, { param: "files" });
      names.add(s.name);
      if (s.kind === "file") {
        let ok = false;
        try {
          ok = statSync(s.path).isFile();
        } catch {
          ok = false;
        }
        if (!ok) throw new AppError("invalid_request", `'${s.path}' is not a readable file.`, { param: "files" });
      }
    }
    const { assets, signatureFiles } = signaturesOf(sources);
    const signatures = new Map<string, string>();
    for (const s of assets) {
      if (s.kind !== "file") {
        if (this.publicKey && s.url !== "") {
          throw new AppError("invalid_request", `${s.name}: an asset known only by its address cannot be checked against GANTRY_RELEASE_PUBLIC_KEY; publish the file (with its signature) instead.`, { param: "files" });
        }
        continue;
      }
      const sig = readSignatureBeside(s, signatureFiles.get(s.name));
      if (sig) signatures.set(s.name, sig);
      else if (this.publicKey) {
        throw new AppError("invalid_request", `${s.name} has no signature: GANTRY_RELEASE_PUBLIC_KEY is set, so ${s.name}.minisig or ${s.name}.sig must be beside it.`, { param: "files" });
      }
    }
    const stored = new Map<string, MirrorObject>();
    try {
      for (const s of assets) {
        if (s.kind !== "file") continue;
        const file = Bun.file(s.path);
        const sig = signatures.get(s.name);
        if (!sig) {
          stored.set(s.name, await this.mirror.put(file.stream(), { expectedSize: file.size }));
          continue;
        }
        // The signature is checked against the very bytes that go into the mirror (one read, two consumers).
        const [toMirror, toCheck] = file.stream().tee();
        const [obj, checked] = await Promise.allSettled([
          this.mirror.put(toMirror, { expectedSize: file.size }),
          signatureToKeep(this.publicKey, s.name, sig, toCheck, file.size),
        ]);
        if (obj.status === "fulfilled") stored.set(s.name, obj.value);
        if (obj.status === "rejected") throw obj.reason;
        if (checked.status === "rejected") throw checked.reason;
        if (checked.value === null) signatures.delete(s.name);
        else signatures.set(s.name, checked.value);
      }
    } catch (err) {
      await this.collect([...stored.values()].map((o) => o.sha256));
      throw err;
    }
    const { release, replaced } = await this.store.publish(
      this.releasePut(v, m),
      assets.map((s) => {
        const obj = stored.get(s.name);
        return {
          name: s.name,
          classification: s.classification
            ? { ...classifyAsset(s.name), ...s.classification, classifiedByOperator: true }
            : classifyAsset(s.name),
          fields: {
            ...(obj
              ? { ...storedFields(obj), mirrored: true, upstreamUrl: null }
              : { ...NO_DIGESTS, size: null, mirrored: false, upstreamUrl: (s as { url: string }).url || null }),
            ...NOT_SYNCED,
            signature: signatures.get(s.name) ?? null,
          },
        };
      }),
    );
    await this.collect(replaced);
    return release;
  }

  async upload(version: string, name: string, body: ReadableStream<Uint8Array>, expectedSize: number | null): Promise<AssetRecord> {
    this.refuseUnsigned(name);
    const release = await this.find(version);
    const clean = checkAssetName(name);
    const obj = await this.mirror.put(body, { expectedSize });
    const { asset, replaced } = await this.store.putAsset(release.id, {
      name: clean,
      classification: classifyAsset(clean),
      fields: { ...storedFields(obj), mirrored: true, upstreamUrl: null, ...NOT_SYNCED },
    });
    await this.collect(replaced);
    return asset;
  }

  /** Adds (or replaces) an asset known only by its upstream address. */
  async addUrlAsset(version: string, name: string, url: string): Promise<AssetRecord> {
    if (url.trim() !== "") this.refuseUnsigned(name);
    const release = await this.find(version);
    const clean = checkAssetName(name);
    const u = checkUpstreamUrl(url);
    const { asset, replaced } = await this.store.putAsset(release.id, {
      name: clean,
      classification: classifyAsset(clean),
      fields: { ...NO_DIGESTS, size: null, mirrored: false, upstreamUrl: u || null, mirrorError: null, mirrorPending: false },
    });
    await this.collect(replaced);
    return asset;
  }

  async update(version: string, meta: ReleaseMeta): Promise<ReleaseRecord> {
    const release = await this.find(version);
    const m = checkReleaseMeta(meta);
    if (m.rolloutPercent !== undefined) this.checkRolloutChange(release, m.rolloutPercent);
    await this.store.update(release.id, m as ReleaseChanges);
    return (await this.store.getById(release.id)) ?? this.gone(version);
  }

  /**
   * `gantry releases rollout`: offers the release to this share of client ids (100 = everyone). Raising it
   * keeps every client already in; lowering it takes the clients above the new share back to the previous
   * release. Refused while the rollout is paused (resume it first) or the release is yanked.
   */
  async rollout(version: string, percent: unknown): Promise<ReleaseRecord> {
    const p = checkRolloutPercent(percent, "percent");
    const release = await this.find(version);
    this.checkRolloutChange(release, p);
    return this.setRollout(release, { rolloutPercent: p });
  }

  /**
   * Decision: a paused rollout keeps its percentage, and no one joins it: only the clients of its group that
   * already run it (by their heartbeats) keep being offered it (rollout.ts); the percentage cannot change
   * until `resume`. A release offered to
   * everyone (100%) has no rollout to pause (409).
   */
  async pause(version: string): Promise<ReleaseRecord> {
    const release = await this.find(version);
    if (release.yanked) throw new AppError("conflict", `Release ${release.version} is yanked.`, { param: "version" });
    if (release.rolloutPercent >= 100) {
      throw new AppError("conflict", `Release ${release.version} is offered to everyone; there is no staged rollout to pause.`, { param: "version" });
    }
    return this.setRollout(release, { rolloutPaused: true });
  }

  async resume(version: string): Promise<ReleaseRecord> {
    return this.setRollout(await this.find(version), { rolloutPaused: false });
  }

  /** The kill switch: the release leaves every document (its files stay downloadable by asset id); `unyank` undoes it. */
  async yank(version: string, yanked = true): Promise<ReleaseRecord> {
    return this.setRollout(await this.find(version), { yanked });
  }

  private checkRolloutChange(release: ReleaseRecord, percent: number): void {
    if (percent === release.rolloutPercent) return;
    if (release.rolloutPaused) {
      throw new AppError("conflict", `The rollout of ${release.version} is paused at ${release.rolloutPercent}%; resume it first.`, { param: "version" });
    }
    if (release.yanked) throw new AppError("conflict", `Release ${release.version} is yanked.`, { param: "version" });
  }

  private async setRollout(release: ReleaseRecord, changes: ReleaseChanges): Promise<ReleaseRecord> {
    await this.store.update(release.id, changes);
    return (await this.store.getById(release.id)) ?? this.gone(release.version);
  }

  /** Operator override of platform / arch / file type; sync and re-publish keep it from then on. */
  async classify(version: string, asset: string, c: Classification): Promise<AssetRecord> {
    const release = await this.find(version);
    const a = this.findAsset(release, asset);
    await this.store.updateAsset(a.id, { ...checkClassification(c), classifiedByOperator: true });
    return (await this.store.getAsset(a.id)) ?? this.gone(`${version} ${asset}`);
  }

  async deleteAsset(version: string, asset: string): Promise<void> {
    const release = await this.find(version);
    const a = this.findAsset(release, asset);
    await this.store.deleteAsset(a.id);
    if (a.sha256) await this.collect([a.sha256]);
  }

  async delete(version: string): Promise<ReleaseRecord> {
    const release = await this.find(version);
    const shas = await this.store.delete(release.id);
    await this.collect(shas);
    return release;
  }

  private async collect(shas: string[]): Promise<void> {
    for (const sha of new Set(shas)) {
      if (!(await this.store.isShaReferenced(sha))) await this.mirror.remove(sha);
    }
  }

  /** With GANTRY_RELEASE_PUBLIC_KEY set, an asset added without a signature (admin upload, URL asset) is refused. */
  private refuseUnsigned(name: string): void {
    if (this.publicKey) {
      throw new AppError("invalid_request", `${name.slice(0, 64)}: GANTRY_RELEASE_PUBLIC_KEY is set, so assets are added only with their signature (gantry releases publish, or sync).`, { param: "name" });
    }
  }

  /** Deleted by someone else between our write and our read. */
  private gone(what: string): never {
    throw new AppError("not_found", `'${what.slice(0, 64)}' was deleted meanwhile.`);
  }
}
