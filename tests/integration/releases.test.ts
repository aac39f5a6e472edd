/**
 * Releases end to end over HTTP: publish through the admin API and through the CLI (same database file),
 * then the latest document, filters, recommendations, ETag/304 and the legacy manifest.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { seenFromAnotherProcess } from "../support/other-process";
import { tempDirs } from "../support/temp-dirs";

const ROOT = join(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");

function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}
function sample(name: string, size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + name.length * 7) & 0xff;
  return out;
}

async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([BUN, "src/main.ts", "releases", ...args, "--data-dir", dataDir], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GANTRY_LOG_LEVEL: "error" },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

let g: Gantry;
let dataDir: string;
let filesDir: string;
const files: Record<string, Uint8Array<ArrayBuffer>> = {};

/** The latest document once it shows what the CLI (another process) just changed; see support/other-process.ts. */
function latestShowing(version: string): Promise<any> {
  return seenFromAnotherProcess(async () => (await fetch(`${g.url}/api/v1/latest`)).json(), (doc: any) => doc.version === version, `latest ${version}`);
}

beforeAll(async () => {
  dataDir = tempDir("releases");
  filesDir = tempDir("release-files");
  g = await startGantry({ config: { dataDir }, databasePath: join(dataDir, "gantry.db") });
});
afterAll(async () => {
  await g.stop();
});
// After the hook above: the server is stopped before its directory goes.
const tempDir = tempDirs();

describe("before anything is published", () => {
  test("/api/v1/latest is 200 with an empty document; /update/latest.json is 404", async () => {
    const res = await fetch(`${g.url}/api/v1/latest`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const doc = await res.json();
    expect(doc).toMatchObject({ schema: "app.latest.v1", version: "", assets: [] });
    expect(doc.heartbeat).toEqual({
      url: `${g.url}/api/v1/client/heartbeat`,
      method: "POST",
      clientIdHeader: "X-App-Client-ID",
      intervalSeconds: 60,
      onlineWindowSeconds: 300,
    });
    // The document points at no manifest that answers 404.
    expect(doc.manifest).toBeNull();
    const legacy = await fetch(`${g.url}/update/latest.json`);
    expect(legacy.status).toBe(404);
    expect(legacy.headers.get("cache-control")).toBe("no-cache");
    expect((await legacy.json()).error.code).toBe("not_found");
  });
});

describe("publish via the admin API", () => {
  test("create, upload bytes, add an address-only asset", async () => {
    const create = await g.admin("/admin/api/releases", {
      method: "POST",
      body: JSON.stringify({ version: "v1.1.0", notes: "First.", minAppVersion: "1.0.0", publishedAt: "2025-01-10T00:00:00Z" }),
    });
    expect(create.status).toBe(201);
    expect(await create.json()).toMatchObject({ version: "v1.1.0", minAppVersion: "1.0.0", origin: "manual", assets: [] });

    for (const name of ["Gantry-1.1.0-x64-setup.exe", "web-1.1.0.zip"]) {
      files[name] = sample(name, 4096 + name.length);
      const up = await g.admin(`/admin/api/releases/1.1.0/assets/${name}`, { method: "PUT", body: files[name], headers: { "content-type": "application/octet-stream" } });
      expect(up.status).toBe(201);
      expect(await up.json()).toMatchObject({ name, source: "mirror", size: files[name].length, sha256: `sha256:${sha256(files[name])}` });
    }
    const url = await g.admin("/admin/api/releases/1.1.0/assets", { method: "POST", body: JSON.stringify({ name: "Gantry-1.1.0-x64.msi", url: "https://downloads.example.com/x.msi" }) });
    expect(url.status).toBe(201);
    expect(await url.json()).toMatchObject({ source: "proxy", upstreamUrl: "https://downloads.example.com/x.msi", sha256: "" });
  });

  test("refusals: duplicate version 409, bad version 400, unknown release 404, no token 401", async () => {
    const dup = await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "1.1.0" }) });
    expect(dup.status).toBe(409);
    const bad = await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "latest" }) });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.param).toBe("version");
    const badUrl = await g.admin("/admin/api/releases", {
      method: "POST",
      body: JSON.stringify({ version: "9.9.9", assets: [{ name: "a.exe", url: "file:///etc/passwd" }] }),
    });
    expect(badUrl.status).toBe(400);
    expect((await g.admin("/admin/api/releases/9.9.9")).status).toBe(404);
    expect((await fetch(`${g.url}/admin/api/releases`)).status).toBe(401);
  });
});

describe("publish via the CLI, on the same database", () => {
  const names = [
    "Gantry-1.2.0-x64-setup.exe",
    "Gantry-1.2.0-ia32-setup.exe",
    "Gantry-1.2.0-arm64.dmg",
    "Gantry-1.2.0-x64.dmg",
    "Gantry-1.2.0-x86_64.AppImage",
    "gantry_1.2.0_amd64.deb",
    "gantry_1.2.0_arm64.deb",
    "web-1.2.0.zip",
  ];

  test("publish copies local files into the mirror and records NAME=URL assets", async () => {
    for (const name of names) {
      files[name] = sample(name, 3000 + name.length * 10);
      writeFileSync(join(filesDir, name), files[name]);
    }
    const res = await cli(
      dataDir,
      "publish",
      "1.2.0",
      ...names.map((n) => join(filesDir, n)),
      "Gantry-1.2.0-arm64.AppImage=",
      "Gantry-1.2.0-x64.msi=https://downloads.example.com/1.2.0.msi",
      "--notes",
      "Second.",
      "--min-app-version",
      "1.1.0",
      "--published-at",
      "2025-02-20T12:00:00Z",
      "--json",
    );
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ version: "1.2.0", notes: "Second.", minAppVersion: "1.1.0" });
    for (const name of names) {
      expect(out.assets.find((a: any) => a.name === name)).toMatchObject({ source: "mirror", sha256: `sha256:${sha256(files[name])}`, size: files[name].length });
    }
    expect(out.assets.find((a: any) => a.name === "Gantry-1.2.0-arm64.AppImage")).toMatchObject({ source: "unavailable", upstreamUrl: null });
    await latestShowing("1.2.0");
  });

  test("bad input exits 2 and changes nothing", async () => {
    const before = await (await fetch(`${g.url}/api/v1/latest`)).text();
    expect((await cli(dataDir, "publish", "not-a-version", join(filesDir, names[0]))).code).toBe(2);
    const missing = await cli(dataDir, "publish", "1.3.0", join(filesDir, names[0]), join(filesDir, "nope.exe"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.exe");
    expect((await cli(dataDir, "publish", "1.3.0", "x.exe=ftp://example.com/x.exe")).code).toBe(2);
    expect((await cli(dataDir, "publish", "1.3.0")).code).toBe(2);
    expect((await cli(dataDir, "frobnicate")).code).toBe(2);
    expect((await g.admin("/admin/api/releases/1.3.0")).status).toBe(404);
    expect(await (await fetch(`${g.url}/api/v1/latest`)).text()).toBe(before);
  });

  test("list shows both releases, newest first", async () => {
    const res = await cli(dataDir, "list", "--json");
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).map((r: any) => r.version)).toEqual(["1.2.0", "v1.1.0"]);
    const text = await cli(dataDir, "list");
    expect(text.stdout).toMatch(/^VERSION\s+PUBLISHED/);
    expect(text.stdout).toContain("1.2.0");
  });
});

describe("GET /api/v1/latest", () => {
  test("the latest release with every asset and the recommendations of the spec", async () => {
    const doc = await (await fetch(`${g.url}/api/v1/latest`)).json();
    expect(doc.version).toBe("1.2.0");
    expect(doc.minAppVersion).toBe("1.1.0");
    expect(doc.assets).toHaveLength(10);
    const recommended = doc.assets.filter((a: any) => a.recommended).map((a: any) => a.name).sort();
    expect(recommended).toEqual(["Gantry-1.2.0-arm64.dmg", "Gantry-1.2.0-x64-setup.exe", "Gantry-1.2.0-x64.dmg", "Gantry-1.2.0-x86_64.AppImage", "gantry_1.2.0_arm64.deb", "web-1.2.0.zip"]);
    expect(doc.download.recommended.map((a: any) => a.name).sort()).toEqual(recommended);
    const exe = doc.assets.find((a: any) => a.name === "Gantry-1.2.0-x64-setup.exe");
    expect(exe).toEqual({
      id: exe.id,
      name: "Gantry-1.2.0-x64-setup.exe",
      platform: "windows",
      arch: "x64",
      fileType: "exe",
      sha256: `sha256:${sha256(files["Gantry-1.2.0-x64-setup.exe"])}`,
      size: files["Gantry-1.2.0-x64-setup.exe"].length,
      source: "mirror",
      downloadUrl: `${g.url}/api/v1/download/${exe.id}`,
      recommended: true,
    });
    const none = doc.assets.find((a: any) => a.name === "Gantry-1.2.0-arm64.AppImage");
    expect(none).toMatchObject({ source: "unavailable", downloadUrl: "", recommended: false });
    expect(doc.assets.find((a: any) => a.name === "Gantry-1.2.0-x64.msi")).toMatchObject({ source: "proxy", recommended: false });
    expect(doc.download.urlTemplate).toBe(`${g.url}/api/v1/download/{assetId}`);
    expect(doc.manifest.url).toBe(`${g.url}/update/latest.json`);
  });

  test("filters are applied on the server, with aliases", async () => {
    const names = async (q: string) => (await (await fetch(`${g.url}/api/v1/latest?${q}`)).json()).assets.map((a: any) => a.name).sort();
    expect(await names("platform=macos")).toEqual(["Gantry-1.2.0-arm64.dmg", "Gantry-1.2.0-x64.dmg"]);
    expect(await names("platform=darwin&arch=aarch64")).toEqual(["Gantry-1.2.0-arm64.dmg"]);
    expect(await names("platform=linux&file_type=deb")).toEqual(["gantry_1.2.0_amd64.deb", "gantry_1.2.0_arm64.deb"]);
    expect(await names("platform=linux&arch=amd64&file_type=appimage")).toEqual(["Gantry-1.2.0-x86_64.AppImage"]);
    expect(await names("platform=windows&arch=x86")).toEqual(["Gantry-1.2.0-ia32-setup.exe"]);
    // A web bundle runs anywhere: it answers every arch filter.
    expect(await names("arch=arm64")).toEqual(["Gantry-1.2.0-arm64.AppImage", "Gantry-1.2.0-arm64.dmg", "gantry_1.2.0_arm64.deb", "web-1.2.0.zip"]);
    const bad = await fetch(`${g.url}/api/v1/latest?platform=beos`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: "invalid_request", param: "platform" });
  });

  test("ETag and 304, compared weakly; a change moves the ETag", async () => {
    const first = await fetch(`${g.url}/api/v1/latest`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(first.headers.get("cache-control")).toBe("no-cache");
    const body = await first.text();
    expect((await fetch(`${g.url}/api/v1/latest`)).headers.get("etag")).toBe(etag);

    for (const inm of [etag, `W/${etag}`, `"x", ${etag}`]) {
      const again = await fetch(`${g.url}/api/v1/latest`, { headers: { "if-none-match": inm } });
      expect(again.status).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      expect(again.headers.get("cache-control")).toBe("no-cache");
      expect(await again.text()).toBe("");
    }
    expect((await fetch(`${g.url}/api/v1/latest`, { headers: { "if-none-match": '"other"' } })).status).toBe(200);
    // A filtered document is a different body, with its own tag.
    const filtered = await fetch(`${g.url}/api/v1/latest?platform=web`, { headers: { "if-none-match": etag } });
    expect(filtered.status).toBe(200);
    expect(filtered.headers.get("etag")).not.toBe(etag);

    const patched = await g.admin("/admin/api/releases/1.2.0", { method: "PATCH", body: JSON.stringify({ notes: "Second, edited." }) });
    expect(patched.status).toBe(200);
    const after = await fetch(`${g.url}/api/v1/latest`, { headers: { "if-none-match": etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect(await after.text()).not.toBe(body);
  });

  test("a pre-release is never offered as latest", async () => {
    const res = await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify({ version: "2.0.0-beta.1", assets: [{ name: "web-2.0.0-beta.1.zip", url: "https://x.example.com/w.zip" }] }) });
    expect(res.status).toBe(201);
    expect((await (await fetch(`${g.url}/api/v1/latest`)).json()).version).toBe("1.2.0");
    expect((await (await fetch(`${g.url}/update/latest.json`)).json()).version).toBe("1.2.0");
    expect((await g.admin("/admin/api/releases/2.0.0-beta.1", { method: "DELETE" })).status).toBe(204);
  });
});

describe("a filtered document names a release with something to download for the filter", () => {
  test("a newer Windows-only release leaves macOS and Linux on 1.2.0; an unavailable asset does not count", async () => {
    const res = await g.admin("/admin/api/releases", {
      method: "POST",
      body: JSON.stringify({
        version: "1.3.0",
        assets: [
          { name: "Gantry-1.3.0-x64-setup.exe", url: "https://downloads.example.com/1.3.0.exe" },
          { name: "Gantry-1.3.0-x86_64.AppImage", url: "" },
        ],
      }),
    });
    expect(res.status).toBe(201);
    const version = async (q: string) => (await (await fetch(`${g.url}/api/v1/latest${q}`)).json()).version;
    expect(await version("")).toBe("1.3.0");
    expect(await version("?platform=windows")).toBe("1.3.0");
    expect(await version("?platform=windows&arch=x64&file_type=exe")).toBe("1.3.0");
    expect(await version("?platform=macos")).toBe("1.2.0");
    expect(await version("?platform=linux&file_type=appimage")).toBe("1.2.0");
    expect(await version("?file_type=dmg")).toBe("1.2.0");
    const mac = await (await fetch(`${g.url}/api/v1/latest?platform=macos&arch=arm64`)).json();
    expect(mac.assets.map((a: any) => a.name)).toEqual(["Gantry-1.2.0-arm64.dmg"]);
    // Nothing for that filter anywhere: the empty document, not a release with no file.
    const none = await (await fetch(`${g.url}/api/v1/latest?platform=windows&file_type=dmg`)).json();
    expect(none).toMatchObject({ version: "", assets: [] });
    expect((await g.admin("/admin/api/releases/1.3.0", { method: "DELETE" })).status).toBe(204);
    expect(await version("?platform=windows")).toBe("1.2.0");
  });
});

describe("GET /update/latest.json", () => {
  test("the latest web zip with its hash, size, minAppVersion, notes and date; same revalidation", async () => {
    const res = await fetch(`${g.url}/update/latest.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const m = await res.json();
    const latest = await (await fetch(`${g.url}/api/v1/latest?platform=web`)).json();
    const zip = latest.assets[0];
    const hex = sha256(files["web-1.2.0.zip"]);
    expect(m).toEqual({
      version: "1.2.0",
      name: "web-1.2.0.zip",
      url: `${g.url}/api/v1/download/${zip.id}`,
      hash: hex,
      sha256: `sha256:${hex}`,
      size: files["web-1.2.0.zip"].length,
      minAppVersion: "1.1.0",
      notes: "Second, edited.",
      pubDate: "2025-02-20T12:00:00.000Z",
    });
    const etag = res.headers.get("etag")!;
    expect((await fetch(`${g.url}/update/latest.json`, { headers: { "if-none-match": `W/${etag}` } })).status).toBe(304);
  });
});

describe("operator changes", () => {
  test("minAppVersion and classification overrides; re-publishing keeps the override", async () => {
    const patched = await g.admin("/admin/api/releases/1.2.0", { method: "PATCH", body: JSON.stringify({ minAppVersion: "1.0.5" }) });
    expect((await patched.json()).minAppVersion).toBe("1.0.5");
    expect((await g.admin("/admin/api/releases/1.2.0", { method: "PATCH", body: JSON.stringify({ minAppVersion: "soon" }) })).status).toBe(400);

    const cls = await cli(dataDir, "classify", "1.2.0", "gantry_1.2.0_arm64.deb", "--arch", "x86", "--json");
    expect(cls.code).toBe(0);
    expect(JSON.parse(cls.stdout)).toMatchObject({ arch: "x86", classifiedByOperator: true });
    const again = await cli(dataDir, "publish", "1.2.0", join(filesDir, "gantry_1.2.0_arm64.deb"), "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).assets.find((a: any) => a.name === "gantry_1.2.0_arm64.deb").arch).toBe("x86");
    const viaApi = await g.admin("/admin/api/releases/1.2.0/assets/gantry_1.2.0_arm64.deb", { method: "PATCH", body: JSON.stringify({ platform: "beos" }) });
    expect(viaApi.status).toBe(400);
    expect((await cli(dataDir, "classify", "1.2.0", "nope.deb", "--arch", "x64")).code).toBe(1);
  });

  test("delete: the previous release becomes latest, and its web zip the legacy manifest", async () => {
    const del = await cli(dataDir, "delete", "v1.2.0");
    expect(del.code).toBe(0);
    expect(del.stdout).toContain("1.2.0 deleted");
    await latestShowing("1.1.0");
    const m = await (await fetch(`${g.url}/update/latest.json`)).json();
    expect(m).toMatchObject({ version: "1.1.0", name: "web-1.1.0.zip", hash: sha256(files["web-1.1.0.zip"]), minAppVersion: "1.0.0" });
    expect((await cli(dataDir, "delete", "1.2.0")).code).toBe(1);
    // The deleted release's bytes are gone from the mirror; the remaining release's are not.
    const mirror = g.deps.releases.mirror;
    expect(await mirror.has(sha256(files["Gantry-1.2.0-x64-setup.exe"]))).toBe(false);
    expect(await mirror.has(sha256(files["Gantry-1.1.0-x64-setup.exe"]))).toBe(true);
  });
});

describe("publishing a file whose platform the name does not tell", () => {
  test("is refused naming the file and --platform/--arch, creating nothing; with both it is published so classified", async () => {
    const dir = tempDir("release-unknown-platform");
    const file = join(filesDir, "tool.bin");
    writeFileSync(file, sample("tool.bin", 500));
    const refused = await cli(dir, "publish", "3.0.0", file, join(filesDir, "Gantry-1.2.0-x64-setup.exe"));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("'tool.bin'");
    expect(refused.stderr).toContain("--platform");
    expect(refused.stderr).toContain("--arch");
    // Checked before the store is opened: no database was created.
    expect((await cli(dir, "list")).code).toBe(1);

    const noArch = await cli(dir, "publish", "3.0.0", file, "--platform", "linux");
    expect(noArch.code).toBe(2);
    expect(noArch.stderr).toContain("--arch");
    expect((await cli(dir, "publish", "3.0.0", file, "--platform", "beos", "--arch", "x64")).code).toBe(2);

    const ok = await cli(dir, "publish", "3.0.0", file, "tool-extra=", "--platform", "linux", "--arch", "aarch64", "--json");
    expect(ok.stderr).toContain("created a new one");
    expect(ok.code).toBe(0);
    const assets = JSON.parse(ok.stdout).assets;
    expect(assets.find((a: any) => a.name === "tool.bin")).toMatchObject({ platform: "linux", arch: "arm64", source: "mirror" });
    expect(assets.find((a: any) => a.name === "tool-extra")).toMatchObject({ platform: "linux", arch: "arm64", source: "unavailable" });

    // Side files have no platform by nature and need no flags.
    const side = join(filesDir, "latest.yml");
    writeFileSync(side, "version: 3.0.0\n");
    expect((await cli(dir, "publish", "3.0.0", side)).code).toBe(0);
    // The operator's classification is kept by a later re-publish of the same name.
    expect((await cli(dir, "publish", "3.0.0", file, "--platform", "linux", "--arch", "arm64")).code).toBe(0);
  });
});
