/**
 * Signed updates through GitHub release sync (issue 19): a release asset NAME.minisig or NAME.sig is NAME's signature
 * (not an asset), fetched with it and carried base64-encoded by the documents; with GANTRY_RELEASE_PUBLIC_KEY set it
 * must verify against the bytes mirrored, and until it has, the asset is in no document and gets no download link
 * (not even by its upstream address). Signatures are made by the real minisign (Debian's) over real bytes, served by
 * the fake GitHub (tests/support/fake-github.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bytesOf, startFakeGitHub, type FakeAsset, type FakeGitHub } from "../support/fake-github";
import { startGantry, type Gantry } from "../support/harness";
import { minisignKeys, minisignSign, type MinisignKeys } from "../support/minisign";
import { openDatabase } from "../../src/store/sqlite/db";
import { tempDirs } from "../support/temp-dirs";

const ROOT = join(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const TOKEN = "ghp_signed_sync_token_0123456789";
/** The fake GitHub listens on 127.0.0.1, which Gantry fetches from only when the operator allows it. */
const LOOPBACK_ALLOWED = { allowedFetchHosts: ["127.0.0.1"] };
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const b64 = (text: string) => Buffer.from(text).toString("base64");

const tempDir = tempDirs();
let dir: string;
let keys: MinisignKeys;
let other: MinisignKeys;
let counter = 0;

beforeAll(() => {
  dir = tempDir("signed-sync");
  keys = minisignKeys(dir, "release");
  other = minisignKeys(dir, "other");
});

/** The minisign signature file `by` makes of `bytes` (prehashed, minisign's default). */
function sign(bytes: Uint8Array, by: MinisignKeys = keys): string {
  const path = join(dir, `file-${++counter}`);
  writeFileSync(path, bytes);
  return minisignSign(by, path);
}

/** An asset with its signature beside it on the release (NAME.minisig unless `suffix` says otherwise). */
function signedAsset(id: number, name: string, bytes: Uint8Array<ArrayBuffer>, text: string, more: Partial<FakeAsset> & { suffix?: ".minisig" | ".sig" } = {}): FakeAsset {
  const { suffix, ...rest } = more;
  return { id, name, bytes, signature: { id: id * 10, text, suffix }, ...rest };
}

const byName = (doc: any) => Object.fromEntries(doc.assets.map((a: any) => [a.name, a]));

describe("without GANTRY_RELEASE_PUBLIC_KEY: signatures travel with their assets, unchecked", () => {
  const exe = bytesOf("exe1", 70_000);
  const zip = bytesOf("zip1", 9_000);
  const dmg = bytesOf("dmg1", 30_000);
  const appImage = bytesOf("appimage1", 20_000);
  let exeSig: string;
  let zipSig: string;
  let dmgSig: string;
  let gh: FakeGitHub;
  let g: Gantry;
  beforeAll(async () => {
    exeSig = sign(exe);
    zipSig = sign(zip);
    // Another key's signature: not checked without the key, so carried as it is.
    dmgSig = sign(dmg, other);
    gh = startFakeGitHub({
      releases: [{
        id: 1,
        tag: "v1.0.0",
        assets: [
          signedAsset(11, "App-1.0.0-x64-setup.exe", exe, exeSig),
          // Tauri's form: the .sig holds the base64 of the minisign text.
          signedAsset(12, "web-1.0.0.zip", zip, b64(zipSig), { suffix: ".sig", withDigest: true }),
          signedAsset(13, "App-1.0.0-arm64.dmg", dmg, dmgSig),
          { id: 14, name: "App-1.0.0-x86_64.AppImage", bytes: appImage },
          // A signature whose file is not on the release: ignored, not an asset.
          { id: 15, name: "App-1.0.0-x64.msi.minisig", bytes: new TextEncoder().encode(sign(bytesOf("msi", 100))) },
        ],
      }],
    });
    g = await startGantry({ config: LOOPBACK_ALLOWED });
  });
  afterAll(async () => {
    await g.stop();
    await gh.stop();
  });

  test("signed assets sync; the documents carry each signature base64-encoded; signature files are no assets", async () => {
    const report = await g.deps.releases.sync.run({ repo: "acme/app", apiUrl: gh.apiUrl });
    expect(report.status).toBe("ok");
    expect(report.downloaded.map((d) => d.name).sort()).toEqual(["App-1.0.0-arm64.dmg", "App-1.0.0-x64-setup.exe", "App-1.0.0-x86_64.AppImage", "web-1.0.0.zip"]);
    // The signatures were fetched (the orphan was not), each once.
    const fetched = (name: string) => gh.requests.filter((r) => r.path.endsWith(`/download/v1.0.0/${encodeURIComponent(name)}`)).length;
    expect([fetched("App-1.0.0-x64-setup.exe.minisig"), fetched("web-1.0.0.zip.sig"), fetched("App-1.0.0-arm64.dmg.minisig")]).toEqual([1, 1, 1]);
    expect(fetched("App-1.0.0-x64.msi.minisig")).toBe(0);

    const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
    expect(doc.version).toBe("1.0.0");
    const assets = byName(doc);
    expect(Object.keys(assets).sort()).toEqual(["App-1.0.0-arm64.dmg", "App-1.0.0-x64-setup.exe", "App-1.0.0-x86_64.AppImage", "web-1.0.0.zip"]);
    expect(assets["App-1.0.0-x64-setup.exe"]).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(exe)}`, signature: b64(exeSig) });
    // A Tauri .sig is given back as it was uploaded: the base64 of the minisign text.
    expect(assets["web-1.0.0.zip"].signature).toBe(b64(zipSig));
    expect(assets["App-1.0.0-arm64.dmg"]).toMatchObject({ source: "mirror", signature: b64(dmgSig) });
    expect("signature" in assets["App-1.0.0-x86_64.AppImage"]).toBe(false);

    const manifest = await (await fetch(`${g.url}/update/latest.json`)).json();
    expect(manifest).toMatchObject({ name: "web-1.0.0.zip", hash: sha256(zip), signature: b64(zipSig) });
  });
});

describe("with GANTRY_RELEASE_PUBLIC_KEY: only assets mirrored with a verified signature are offered", () => {
  const exe = bytesOf("exe2", 80_000);
  const dmg = bytesOf("dmg2", 40_000);
  const appImage = bytesOf("appimage2", 25_000);
  const deb = bytesOf("deb2", 15_000);
  const zip = bytesOf("zip2", 12_000);
  let exeSig: string;
  let gh: FakeGitHub;
  let g: Gantry;
  beforeAll(async () => {
    exeSig = sign(exe);
    gh = startFakeGitHub({
      token: TOKEN,
      releases: [{
        id: 2,
        tag: "v2.0.0",
        assets: [
          signedAsset(21, "App-2.0.0-x64-setup.exe", exe, exeSig),
          // Signed by the right key, but over other bytes.
          signedAsset(22, "App-2.0.0-arm64.dmg", dmg, sign(bytesOf("not the dmg", 40_000))),
          { id: 23, name: "App-2.0.0-x86_64.AppImage", bytes: appImage },
          // A good signature, but the file's download fails: without the key it would be proxied meanwhile.
          signedAsset(24, "App-2.0.0-amd64.deb", deb, sign(deb), { failStatus: 500 }),
          signedAsset(25, "web-2.0.0.zip", zip, sign(zip, other)),
        ],
      }],
    });
    g = await startGantry({ config: { ...LOOPBACK_ALLOWED, releasePublicKey: keys.line }, captureLogs: true });
  });
  afterAll(async () => {
    await g.stop();
    await gh.stop();
  });
  const run = () => g.deps.releases.sync.run({ repo: "acme/app", apiUrl: gh.apiUrl, token: TOKEN });
  const latest = async (query = "") => (await fetch(`${g.url}/api/v1/latest${query}`)).json();
  const adminAsset = async (name: string) => ((await (await g.admin("/admin/api/releases/v2.0.0")).json()) as any).assets.find((a: any) => a.name === name);

  test("a wrong, another key's or a missing signature, and a failed download, keep the asset out of every document; a good one is offered", async () => {
    const report = await run();
    expect(report.status).toBe("partial");
    expect(report.downloaded.map((d) => d.name)).toEqual(["App-2.0.0-x64-setup.exe"]);
    const failed = Object.fromEntries(report.failed.map((f) => [f.name, f]));
    expect(Object.keys(failed).sort()).toEqual(["App-2.0.0-amd64.deb", "App-2.0.0-arm64.dmg", "App-2.0.0-x86_64.AppImage", "web-2.0.0.zip"]);
    expect(report.failed.every((f) => f.meanwhile === "withheld")).toBe(true);
    expect(failed["App-2.0.0-arm64.dmg"].error).toContain("signature does not match the file");
    expect(failed["web-2.0.0.zip"].error).toContain(`not the configured key`);
    expect(failed["App-2.0.0-x86_64.AppImage"].error).toContain("no signature (App-2.0.0-x86_64.AppImage.minisig or App-2.0.0-x86_64.AppImage.sig)");
    expect(failed["App-2.0.0-amd64.deb"].error).toContain("500");
    for (const f of report.failed.filter((x) => x.name !== "App-2.0.0-amd64.deb")) expect(f.error).toContain("GANTRY_RELEASE_PUBLIC_KEY");

    // Nothing downloaded for an asset that cannot be verified: no signature, or another key's.
    expect(gh.downloadsOf("App-2.0.0-x86_64.AppImage")).toEqual([]);
    expect(gh.downloadsOf("web-2.0.0.zip")).toEqual([]);
    // The dmg was downloaded and failed: its bytes left the mirror again.
    expect(gh.downloadsOf("App-2.0.0-arm64.dmg").length).toBeGreaterThan(0);
    expect(await g.deps.releases.mirror.has(sha256(dmg))).toBe(false);
    // The token went to the API only (the fake storage answers 400 to a request carrying one).
    expect(gh.requests.filter((r) => r.host === "storage").every((r) => r.status === 200 && r.headers.authorization === undefined)).toBe(true);

    const doc = await latest();
    expect(doc.version).toBe("2.0.0");
    expect(doc.assets.map((a: any) => a.name)).toEqual(["App-2.0.0-x64-setup.exe"]);
    expect(doc.assets[0]).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(exe)}`, signature: b64(exeSig), recommended: true });
    // No Linux file is offered, so a Linux client is offered no release at all.
    expect((await latest("?platform=linux")).version).toBe("");
    expect((await fetch(`${g.url}/update/latest.json`)).status).toBe(404);
    // No download link either, by id.
    for (const name of ["App-2.0.0-arm64.dmg", "App-2.0.0-amd64.deb", "App-2.0.0-x86_64.AppImage"]) {
      const a = await adminAsset(name);
      expect(a.mirrorError).toBeTruthy();
      const res = await fetch(`${g.url}/api/v1/download/${a.id}`, { redirect: "manual" });
      expect(res.status).toBe(404);
    }

    // The log says why, and gives neither the token nor an address.
    const lines = g.logs.filter((l) => l.includes("asset not offered"));
    expect(lines.length).toBe(4);
    expect(lines.some((l) => l.includes("App-2.0.0-arm64.dmg") && l.includes("does not match"))).toBe(true);
    expect(g.logs.some((l) => l.includes(TOKEN) || l.includes(gh.storageUrl))).toBe(false);
  });

  test("once a good signature is on the release (and the download works) the next sync offers the asset", async () => {
    const release = gh.releases[0];
    const find = (name: string) => release.assets.find((a) => a.name === name)!;
    // Signatures replaced by the publisher: new asset ids, as a re-upload on GitHub gives.
    find("App-2.0.0-arm64.dmg").signature = { id: 2201, text: sign(dmg) };
    find("web-2.0.0.zip").signature = { id: 2501, text: sign(zip) };
    delete find("App-2.0.0-amd64.deb").failStatus;
    const report = await run();
    expect(report.downloaded.map((d) => d.name).sort()).toEqual(["App-2.0.0-amd64.deb", "App-2.0.0-arm64.dmg", "web-2.0.0.zip"]);
    expect(report.failed.map((f) => f.name)).toEqual(["App-2.0.0-x86_64.AppImage"]);

    const assets = byName(await latest());
    expect(Object.keys(assets).sort()).toEqual(["App-2.0.0-amd64.deb", "App-2.0.0-arm64.dmg", "App-2.0.0-x64-setup.exe", "web-2.0.0.zip"]);
    expect(assets["App-2.0.0-arm64.dmg"]).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(dmg)}`, signature: b64(find("App-2.0.0-arm64.dmg").signature!.text) });
    const manifest = await (await fetch(`${g.url}/update/latest.json`)).json();
    expect(manifest).toMatchObject({ name: "web-2.0.0.zip", hash: sha256(zip), signature: b64(find("web-2.0.0.zip").signature!.text) });
    const res = await fetch(assets["App-2.0.0-arm64.dmg"].downloadUrl);
    expect(res.status).toBe(200);
    expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(dmg));
  });

  test("new bytes of an offered file that do not verify leave the verified bytes before offered", async () => {
    const exeAsset = gh.releases[0].assets.find((a) => a.name === "App-2.0.0-x64-setup.exe")!;
    const newer = bytesOf("exe2 rebuilt", 81_000);
    Object.assign(exeAsset, { bytes: newer, updatedAt: "2025-03-01T00:00:00Z", signature: { id: 2102, text: sign(bytesOf("something else", 10)) } });
    const report = await run();
    expect(report.failed.find((f) => f.name === "App-2.0.0-x64-setup.exe")).toMatchObject({ meanwhile: "mirror", error: expect.stringContaining("does not match") });
    expect(await g.deps.releases.mirror.has(sha256(newer))).toBe(false);
    const offered = byName(await latest())["App-2.0.0-x64-setup.exe"];
    expect(offered).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(exe)}`, signature: b64(exeSig) });
  });
});

describe("gantry releases sync (CLI) with --release-public-key", () => {
  let gh: FakeGitHub;
  let dataDir: string;
  const exe = bytesOf("exe3", 10_000);
  const dmg = bytesOf("dmg3", 10_000);
  beforeAll(() => {
    gh = startFakeGitHub({
      releases: [{
        id: 3,
        tag: "v3.0.0",
        assets: [signedAsset(31, "App-3.0.0-x64-setup.exe", exe, sign(exe)), signedAsset(32, "App-3.0.0-arm64.dmg", dmg, sign(bytesOf("other", 10)))],
      }],
    });
    dataDir = tempDir("signed-sync-cli");
    // A database as a server leaves it (on a fresh dir the CLI would create one and say so on stderr).
    openDatabase(join(dataDir, "gantry.db")).close();
  });
  afterAll(async () => {
    await gh.stop();
  });

  test("says which asset is not offered and why; exits 1", async () => {
    const proc = Bun.spawn(
      [BUN, "src/main.ts", "releases", "sync", "--github", "acme/app", "--api-url", gh.apiUrl, "--allowed-fetch-hosts", "127.0.0.1", "--release-public-key", keys.pubPath, "--data-dir", dataDir],
      { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, GANTRY_LOG_LEVEL: "error", GANTRY_RELEASE_PUBLIC_KEY: "" } },
    );
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect(stderr).toBe("");
    expect(code).toBe(1);
    expect(stdout).toContain("downloaded: 1 file(s)");
    expect(stdout).toContain("not offered (no verified signature yet): v3.0.0 App-3.0.0-arm64.dmg: its signature does not match the file");
    expect(stdout).not.toContain("App-3.0.0-x64-setup.exe");
  });
});
