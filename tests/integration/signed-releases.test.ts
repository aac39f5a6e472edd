/**
 * Signed updates (issue 19): `gantry releases publish` takes each file's minisign signature from FILE.minisig or
 * FILE.sig beside it, verifies it when GANTRY_RELEASE_PUBLIC_KEY is set (refusing a missing or wrong one), and the
 * latest documents carry it base64-encoded, as Tauri's latest.json does. Keys and signatures come from the real
 * minisign (Debian's /usr/bin/minisign).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { minisignKeys, minisignSign, type MinisignKeys } from "../support/minisign";
import { seenFromAnotherProcess } from "../support/other-process";
import { tempDirs } from "../support/temp-dirs";

const ROOT = join(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");

async function publish(env: Record<string, string>, version: string, ...files: string[]) {
  const proc = Bun.spawn([BUN, "src/main.ts", "releases", "publish", version, ...files, "--data-dir", dataDir, "--json"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GANTRY_LOG_LEVEL: "error", GANTRY_RELEASE_PUBLIC_KEY: "", ...env },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

function file(name: string, size: number, seed: number): string {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = (i * 131 + seed) & 0xff;
  const path = join(filesDir, name);
  writeFileSync(path, b);
  return path;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

function latestShowing(version: string): Promise<any> {
  return seenFromAnotherProcess(async () => (await fetch(`${g.url}/api/v1/latest`)).json(), (doc: any) => doc.version === version, `latest ${version}`);
}

async function versions(): Promise<string[]> {
  const docs = await g.admin("/admin/api/releases");
  return ((await docs.json()) as any).data.map((r: any) => r.version);
}

let g: Gantry;
let dataDir: string;
let filesDir: string;
let keys: MinisignKeys;
let other: MinisignKeys;

beforeAll(async () => {
  dataDir = tempDir("signed");
  filesDir = tempDir("signed-files");
  keys = minisignKeys(filesDir, "release");
  other = minisignKeys(filesDir, "other");
  g = await startGantry({ config: { dataDir }, databasePath: join(dataDir, "gantry.db") });
});
afterAll(async () => {
  await g.stop();
});
const tempDir = tempDirs();

describe("without GANTRY_RELEASE_PUBLIC_KEY: signatures are carried when present, not required", () => {
  test("a .minisig beside a file goes into the document as base64; an unsigned file has none; signature files are no assets", async () => {
    const signed = file("App-1.0.0-x64-setup.exe", 70_000, 1);
    const unsigned = file("App-1.0.0-arm64.dmg", 50_000, 2);
    const sigText = minisignSign(keys, signed);
    // The .minisig given as an argument too (a glob of dist/*): attached to its file, not published as an asset.
    const r = await publish({}, "1.0.0", signed, unsigned, `${signed}.minisig`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = await latestShowing("1.0.0");
    expect(doc.assets.map((a: any) => a.name).sort()).toEqual(["App-1.0.0-arm64.dmg", "App-1.0.0-x64-setup.exe"]);
    const byName = (n: string) => doc.assets.find((a: any) => a.name === n);
    expect(byName("App-1.0.0-x64-setup.exe").signature).toBe(b64(sigText));
    expect(byName("App-1.0.0-arm64.dmg").signature).toBeUndefined();
  });
});

describe("with GANTRY_RELEASE_PUBLIC_KEY", () => {
  test("good signatures (prehashed, legacy, a Tauri .sig) are verified and published; the web zip's is in /update/latest.json", async () => {
    const exe = file("App-1.1.0-x64-setup.exe", 200_000, 3);
    const appimage = file("App-1.1.0-x86_64.AppImage", 90_000, 4);
    const zip = file("web-1.1.0.zip", 30_000, 5);
    const exeSig = minisignSign(keys, exe);
    const appimageSig = minisignSign(keys, appimage, { legacy: true });
    // Tauri's signer writes FILE.sig holding the base64 of the minisign text; latest.json carries that as is.
    const zipSig = minisignSign(keys, zip, { sigPath: join(filesDir, "tmp.minisig") });
    writeFileSync(`${zip}.sig`, b64(zipSig));
    const r = await publish({ GANTRY_RELEASE_PUBLIC_KEY: keys.line }, "1.1.0", exe, appimage, zip);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = await latestShowing("1.1.0");
    const byName = (n: string) => doc.assets.find((a: any) => a.name === n);
    expect(byName("App-1.1.0-x64-setup.exe").signature).toBe(b64(exeSig));
    expect(byName("App-1.1.0-x86_64.AppImage").signature).toBe(b64(appimageSig));
    expect(byName("web-1.1.0.zip").signature).toBe(readFileSync(`${zip}.sig`, "utf8"));
    const legacy = await (await fetch(`${g.url}/update/latest.json`)).json();
    expect(legacy).toMatchObject({ version: "1.1.0", name: "web-1.1.0.zip", signature: readFileSync(`${zip}.sig`, "utf8") });
  });

  test("a Tauri updater bundle (.AppImage.tar.gz, .app.tar.gz, .nsis.zip, .msi.zip) is published with its .sig, classified by what it wraps", async () => {
    const names = ["MyApp_1.1.5_amd64.AppImage.tar.gz", "MyApp_1.1.5_aarch64.app.tar.gz", "MyApp_1.1.5_x64-setup.nsis.zip", "MyApp_1.1.5_x64_en-US.msi.zip"];
    const paths = names.map((n, i) => file(n, 20_000 + i, 20 + i));
    const sigs = paths.map((p) => {
      // As `tauri signer sign` writes it: FILE.sig holding the base64 of the minisign signature text.
      const sigFile = b64(minisignSign(keys, p, { sigPath: join(filesDir, "tmp.minisig") }));
      writeFileSync(`${p}.sig`, sigFile);
      return sigFile;
    });
    // Without --platform: the names tell (before, 'cannot be derived from the file name' for all but .app.tar.gz).
    const r = await publish({ GANTRY_RELEASE_PUBLIC_KEY: keys.line }, "1.1.5", ...paths, ...paths.map((p) => `${p}.sig`));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = await latestShowing("1.1.5");
    const got = Object.fromEntries(doc.assets.map((a: any) => [a.name, [a.platform, a.arch, a.fileType, a.signature]]));
    expect(got).toEqual({
      [names[0]]: ["linux", "x64", "tar.gz", sigs[0]],
      [names[1]]: ["macos", "arm64", "tar.gz", sigs[1]],
      [names[2]]: ["windows", "x64", "zip", sigs[2]],
      [names[3]]: ["windows", "x64", "zip", sigs[3]],
    });
    const linux = await (await fetch(`${g.url}/api/v1/latest?platform=linux&arch=x64`)).json();
    expect(linux.assets.map((a: any) => a.name)).toEqual([names[0]]);
  });

  test("the key may be given as the .pub file's path", async () => {
    const exe = file("App-1.2.0-x64-setup.exe", 10_000, 6);
    const sig = minisignSign(keys, exe);
    const r = await publish({ GANTRY_RELEASE_PUBLIC_KEY: keys.pubPath }, "1.2.0", exe);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect((await latestShowing("1.2.0")).assets[0].signature).toBe(b64(sig));
  });

  test("a missing signature, a changed byte, another key's signature: refused with a clear message, nothing published", async () => {
    const good = file("App-2.0.0-x64-setup.exe", 40_000, 7);
    minisignSign(keys, good);
    const missing = file("App-2.0.0-arm64.dmg", 40_000, 8);
    let r = await publish({ GANTRY_RELEASE_PUBLIC_KEY: keys.line }, "2.0.0", good, missing);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("pp-2.0.0-arm64.dmg has no signature");
    expect(r.stderr).toContain("App-2.0.0-arm64.dmg.minisig");

    const tampered = file("App-2.0.0-x86_64.AppImage", 40_000, 9);
    minisignSign(keys, tampered);
    const bytes = readFileSync(tampered);
    bytes[20_000] ^= 1;
    writeFileSync(tampered, bytes);
    r = await publish({ GANTRY_RELEASE_PUBLIC_KEY: keys.line }, "2.0.0", good, tampered);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the signature of App-2.0.0-x86_64.AppImage does not match the file");

    const foreign = file("App-2.0.0-x64.msi", 40_000, 10);
    minisignSign(other, foreign);
    r = await publish({ GANTRY_RELEASE_PUBLIC_KEY: keys.line }, "2.0.0", good, foreign);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the signature of App-2\.0\.0-x64\.msi was made with key [0-9A-F]{16}, not the configured key/);

    const url = await publish({ GANTRY_RELEASE_PUBLIC_KEY: keys.line }, "2.0.0", "App.exe=https://example.com/App.exe");
    expect(url.code).toBe(2);
    expect(url.stderr).toContain("cannot be checked against GANTRY_RELEASE_PUBLIC_KEY");

    expect(await versions()).not.toContain("2.0.0");
    // The same files publish without the setting (only the unsigned one lacks a signature there).
    r = await publish({}, "2.0.0", good, missing);
    expect(r.code).toBe(0);
  }, 30_000); // six CLI runs: 5 s is too tight on a loaded 2-core machine

  test("a setting that is no minisign public key is refused at start", async () => {
    const r = await publish({ GANTRY_RELEASE_PUBLIC_KEY: "not-a-key" }, "3.0.0", file("x.exe", 10, 1));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("GANTRY_RELEASE_PUBLIC_KEY");
  });
});
