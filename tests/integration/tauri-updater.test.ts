/**
 * Tauri v2's updater against Gantry (issue 35): bundles signed by the real `tauri signer` (npm @tauri-apps/cli),
 * published with GANTRY_RELEASE_PUBLIC_KEY set to the base64 public key as tauri.conf.json holds it; the dynamic
 * endpoint (204, or the update with its signature), bundle types, staged rollouts by X-App-Client-ID, the static
 * latest.json; every signature handed out is checked by Debian's minisign against the bytes its URL serves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { bytesOf } from "../support/fake-github";
import { pollUntil } from "../support/poll";
import { seenFromAnotherProcess } from "../support/other-process";
import { tempDirs } from "../support/temp-dirs";
import { rolloutBucket } from "../../src/site/releases/rules/rollout";

const ROOT = join(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const TAURI = join(ROOT, "node_modules/.bin/tauri");
const tempDir = tempDirs();

let g: Gantry;
let dataDir: string;
let filesDir: string;
/** The public key as tauri.conf.json holds it: the base64 of the .pub file. */
let tauriPubKey: string;
/** Its minisign key line (RW…), for `minisign -P`. */
let minisignKey: string;

function run(cmd: string[], env: Record<string, string> = {}): string {
  const r = Bun.spawnSync(cmd, { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr.toString()} ${r.stdout.toString()}`);
  return r.stdout.toString();
}

/** A bundle file signed by `tauri signer sign` (FILE.sig beside it). */
function signedBundle(name: string, seed: string, size: number): string {
  const path = join(filesDir, name);
  writeFileSync(path, bytesOf(seed, size));
  run([TAURI, "signer", "sign", "-f", join(filesDir, "app.key"), "-p", "", path], { CI: "true" });
  return path;
}

async function publish(version: string, ...files: string[]): Promise<void> {
  const proc = Bun.spawn([BUN, "src/main.ts", "releases", "publish", version, ...files, "--data-dir", dataDir, "--json"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GANTRY_LOG_LEVEL: "error", GANTRY_RELEASE_PUBLIC_KEY: tauriPubKey },
  });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
}

/** Downloads `url` (following Gantry's redirect) and checks `signature` (Tauri's base64 form) with minisign. */
async function verifiedByMinisign(url: string, signature: string): Promise<boolean> {
  const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
  const file = join(filesDir, `dl-${crypto.randomUUID()}`);
  writeFileSync(file, bytes);
  writeFileSync(`${file}.minisig`, Buffer.from(signature, "base64"));
  return Bun.spawnSync(["minisign", "-V", "-q", "-P", minisignKey, "-m", file, "-x", `${file}.minisig`], { stdout: "pipe", stderr: "pipe" }).exitCode === 0;
}

const check = (path: string, headers: Record<string, string> = {}) => fetch(`${g.url}/update/tauri/${path}`, { headers });

/** A client id Gantry places inside (or outside) 1.1.0's 50% rollout. */
function clientId(inside: boolean): string {
  for (;;) {
    const id = crypto.randomUUID();
    if (rolloutBucket(id, "1.1.0") < 5000 === inside) return id;
  }
}

beforeAll(async () => {
  dataDir = tempDir("tauri");
  filesDir = tempDir("tauri-files");
  run([TAURI, "signer", "generate", "-w", join(filesDir, "app.key"), "-p", "", "--ci"], { CI: "true" });
  tauriPubKey = readFileSync(join(filesDir, "app.key.pub"), "utf8").trim();
  minisignKey = Buffer.from(tauriPubKey, "base64").toString("utf8").trim().split("\n")[1].trim();
  g = await startGantry({ config: { dataDir, releasePublicKey: tauriPubKey }, databasePath: join(dataDir, "gantry.db") });
  const v100 = [
    signedBundle("MyApp_1.0.0_amd64.AppImage.tar.gz", "ai-100", 30_000),
    signedBundle("MyApp_1.0.0_amd64.deb", "deb-100", 20_000),
    signedBundle("MyApp_1.0.0_x64-setup.exe", "nsis-100", 25_000),
    signedBundle("MyApp_1.0.0_x64_en-US.msi", "msi-100", 26_000),
    signedBundle("MyApp_1.0.0_aarch64.app.tar.gz", "app-100", 27_000),
  ];
  await publish("1.0.0", ...v100, ...v100.map((p) => `${p}.sig`));
  await publish("1.1.0", signedBundle("MyApp_1.1.0_amd64.AppImage.tar.gz", "ai-110", 31_000));
  await seenFromAnotherProcess(async () => (await g.admin("/admin/api/releases/1.1.0")).status, (s) => s === 200, "1.1.0 published");
  expect((await g.admin("/admin/api/releases/1.1.0/rollout", { method: "POST", body: JSON.stringify({ percent: 50 }) })).status).toBe(200);
}, 120_000); // tauri signer derives its key with scrypt on every call: about a second each on a loaded machine
afterAll(async () => {
  await g.stop();
});

describe("the dynamic endpoint", () => {
  test("an older client gets the update: version, notes, pub_date, url through Gantry, and a signature minisign verifies against those bytes", async () => {
    const res = await check("linux/x86_64/0.9.0");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const doc = (await res.json()) as any;
    expect(Object.keys(doc).sort()).toEqual(["notes", "pub_date", "signature", "url", "version"]);
    expect(doc.version).toBe("1.0.0");
    expect(doc.url).toMatch(new RegExp(`^${g.url}/update/files/\\d+/MyApp_1\\.0\\.0_amd64\\.AppImage\\.tar\\.gz$`));
    expect(doc.signature).toBe(readFileSync(join(filesDir, "MyApp_1.0.0_amd64.AppImage.tar.gz.sig"), "utf8").trim());
    expect(await verifiedByMinisign(doc.url, doc.signature)).toBe(true);
    // A signature is bound to its bytes: the same signature over another bundle's bytes does not verify.
    const other = ((await (await check("linux/x86_64/0.9.0?bundle_type=deb")).json()) as any).url;
    expect(await verifiedByMinisign(other, doc.signature)).toBe(false);
  });

  test("204 when up to date; the staged 1.1.0 only for a client id in its group", async () => {
    expect((await check("linux/x86_64/1.0.0")).status).toBe(204);
    const inside = await check("linux/x86_64/1.0.0", { "X-App-Client-ID": clientId(true) });
    expect(inside.status).toBe(200);
    expect(inside.headers.get("vary")).toContain("X-App-Client-ID");
    const doc = (await inside.json()) as any;
    expect(doc.version).toBe("1.1.0");
    expect(await verifiedByMinisign(doc.url, doc.signature)).toBe(true);
    expect((await check("linux/x86_64/1.0.0", { "X-App-Client-ID": clientId(false) })).status).toBe(204);
    expect((await check("linux/x86_64/1.1.0", { "X-App-Client-ID": clientId(true) })).status).toBe(204);
  });

  test("bundle types and platforms: deb, nsis, msi, the macOS app; nothing for an arch without a build", async () => {
    const name = async (path: string) => ((await (await check(path)).json()) as any).url.split("/").at(-1);
    expect(await name("linux/x86_64/0.1.0?bundle_type=deb")).toBe("MyApp_1.0.0_amd64.deb");
    expect(await name("linux/x86_64/0.1.0?bundle_type=appimage")).toBe("MyApp_1.0.0_amd64.AppImage.tar.gz");
    expect(await name("windows/x86_64/0.1.0")).toBe("MyApp_1.0.0_x64-setup.exe");
    expect(await name("windows/x86_64/0.1.0?bundle_type=msi")).toBe("MyApp_1.0.0_x64_en-US.msi");
    expect(await name("darwin/aarch64/0.1.0")).toBe("MyApp_1.0.0_aarch64.app.tar.gz");
    for (const path of ["darwin/x86_64/0.1.0", "linux/armv7/0.1.0", "linux/aarch64/0.1.0", "linux/x86_64/0.1.0?bundle_type=rpm"]) {
      expect((await check(path)).status).toBe(204);
    }
  });

  test("a paused rollout takes nobody new: a client of its group still on 1.0.0 is up to date until it resumes", async () => {
    const inside = clientId(true);
    expect((await g.admin("/admin/api/releases/1.1.0/pause", { method: "POST" })).status).toBe(200);
    try {
      await pollUntil(async () => (await check("linux/x86_64/1.0.0", { "X-App-Client-ID": inside })).status, (s) => s === 204, { what: "pause seen" });
    } finally {
      expect((await g.admin("/admin/api/releases/1.1.0/resume", { method: "POST" })).status).toBe(200);
    }
    await pollUntil(async () => (await check("linux/x86_64/1.0.0", { "X-App-Client-ID": inside })).status, (s) => s === 200, { what: "resume seen" });
  });

  test("bad input is a 400 with the envelope (Tauri then tries its next endpoint)", async () => {
    for (const [path, param] of [["beos/x86_64/1.0.0", "target"], ["linux/sparc/1.0.0", "arch"], ["linux/x86_64/latest", "current_version"], ["linux/x86_64/1.0.0?bundle_type=msi", "bundle_type"]]) {
      const res = await check(path);
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error).toMatchObject({ code: "invalid_request", param });
    }
  });

  test("checks with a client id count as online clients, with the version they run", async () => {
    const stats = await pollUntil(async () => ((await (await g.admin("/admin/api/stats/clients")).json()) as any), (s) => (s.byRuntime?.tauri ?? 0) >= 3, { what: "online Tauri clients" });
    expect(stats.value.byVersion["1.0.0"]).toBeGreaterThanOrEqual(2);
  });
});

describe("the static latest.json", () => {
  test("a platforms entry per OS-ARCH and OS-ARCH-BUNDLE, each signature verified by minisign", async () => {
    const res = await check("latest.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(doc.version).toBe("1.0.0");
    expect(Object.keys(doc.platforms).sort()).toEqual([
      "darwin-aarch64", "darwin-aarch64-app",
      "linux-x86_64", "linux-x86_64-appimage", "linux-x86_64-deb",
      "windows-x86_64", "windows-x86_64-msi", "windows-x86_64-nsis",
    ]);
    expect(doc.platforms["linux-x86_64"]).toEqual(doc.platforms["linux-x86_64-appimage"]);
    for (const entry of Object.values(doc.platforms) as Array<{ url: string; signature: string }>) {
      expect(await verifiedByMinisign(entry.url, entry.signature)).toBe(true);
    }
    const inside = (await (await check("latest.json", { "X-App-Client-ID": clientId(true) })).json()) as any;
    expect(inside.version).toBe("1.1.0");
    expect(Object.keys(inside.platforms).sort()).toEqual(["linux-x86_64", "linux-x86_64-appimage"]);
  });
});
