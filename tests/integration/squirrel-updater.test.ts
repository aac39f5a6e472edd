/**
 * Squirrel against Gantry (issue 35). Squirrel.Windows: the RELEASES file (SHA-1, address, size per package) read by
 * Squirrel's own SyncReleases.exe (npm electron-winstaller's vendor folder) under Debian's Mono, which downloads the
 * packages it names through Gantry's links. Squirrel.Mac (macOS only, so its HTTP exchange is checked): 204 when up
 * to date, else {url, name, notes, pub_date}; staged rollouts by X-App-Client-ID.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { bytesOf } from "../support/fake-github";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { rolloutBucket } from "../../src/site/releases/rules/rollout";

const ROOT = join(import.meta.dir, "../..");
const SYNC_RELEASES = join(ROOT, "node_modules/electron-winstaller/vendor/SyncReleases.exe");
const tempDir = tempDirs();
const sha1 = (b: Uint8Array) => createHash("sha1").update(b).digest("hex").toUpperCase();

const files: Record<string, Record<string, Uint8Array<ArrayBuffer>>> = {
  "1.0.0": { "MyApp-1.0.0-full.nupkg": bytesOf("full-100", 40_000), "MyApp-1.0.0-mac.zip": bytesOf("zip-100", 9_000) },
  "1.1.0": {
    "MyApp-1.1.0-full.nupkg": bytesOf("full-110", 45_000),
    "MyApp-1.1.0-delta.nupkg": bytesOf("delta-110", 7_000),
    "MyApp-1.1.0-mac.zip": bytesOf("zip-110", 9_500),
    "MyApp-1.1.0-arm64-mac.zip": bytesOf("zip-arm-110", 9_600),
  },
  "1.2.0": { "MyApp-1.2.0-full.nupkg": bytesOf("full-120", 46_000), "MyApp-1.2.0-universal-mac.zip": bytesOf("zip-120", 9_700) },
};

let g: Gantry;
const ids = new Map<string, number>();

/** A client id Gantry places inside (or outside) 1.2.0's 50% rollout. */
function clientId(inside: boolean): string {
  for (;;) {
    const id = crypto.randomUUID();
    if (rolloutBucket(id, "1.2.0") < 5000 === inside) return id;
  }
}

beforeAll(async () => {
  g = await startGantry({});
  for (const [version, named] of Object.entries(files)) {
    const body = { version, notes: `Notes of ${version}`, publishedAt: "2026-11-20T10:00:00.000Z", ...(version === "1.2.0" ? { rolloutPercent: 50 } : {}) };
    expect((await g.admin("/admin/api/releases", { method: "POST", body: JSON.stringify(body) })).status).toBe(201);
    for (const [name, bytes] of Object.entries(named)) {
      expect((await g.admin(`/admin/api/releases/${version}/assets/${name}`, { method: "PUT", body: bytes })).status).toBeLessThan(300);
    }
    for (const a of ((await (await g.admin(`/admin/api/releases/${version}`)).json()) as any).assets) ids.set(a.name, a.id);
  }
});
afterAll(async () => {
  await g.stop();
});

const line = (name: string, version: string) => `${sha1(files[version][name])} ${g.url}/update/files/${ids.get(name)}/${name} ${files[version][name].length}`;

describe("Squirrel.Windows", () => {
  test("RELEASES: the full package and its delta of the release offered, SHA-1 (as Squirrel writes it), address, size", async () => {
    const res = await fetch(`${g.url}/update/squirrel-windows/x64/RELEASES?id=MyApp&localVersion=1.0.0&arch=amd64`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe(`${line("MyApp-1.1.0-full.nupkg", "1.1.0")}\r\n${line("MyApp-1.1.0-delta.nupkg", "1.1.0")}\r\n`);
  });

  test("staged rollouts by a client_id in the feed URL (or X-App-Client-ID): the group gets 1.2.0", async () => {
    const inside = await (await fetch(`${g.url}/update/squirrel-windows/x64/RELEASES?client_id=${clientId(true)}&id=MyApp&localVersion=1.1.0`)).text();
    expect(inside).toBe(`${line("MyApp-1.2.0-full.nupkg", "1.2.0")}\r\n`);
    const outside = await (await fetch(`${g.url}/update/squirrel-windows/x64/RELEASES`, { headers: { "X-App-Client-ID": clientId(false) } })).text();
    expect(outside).toContain("MyApp-1.1.0-full.nupkg");
  });

  test("Squirrel's own SyncReleases.exe (under Mono) reads RELEASES and downloads the full package it names through Gantry, byte for byte (it leaves deltas to Update.exe)", async () => {
    const out = tempDir("sync-releases");
    const proc = Bun.spawn(["mono", SYNC_RELEASES, "-u", `${g.url}/update/squirrel-windows/x64`, "-r", out], { stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(readdirSync(out).sort()).toEqual(["MyApp-1.1.0-full.nupkg", "RELEASES"]);
    expect(new Uint8Array(readFileSync(join(out, "MyApp-1.1.0-full.nupkg")))).toEqual(new Uint8Array(files["1.1.0"]["MyApp-1.1.0-full.nupkg"]));
    expect(readFileSync(join(out, "RELEASES"), "utf8")).toContain(sha1(files["1.1.0"]["MyApp-1.1.0-full.nupkg"]));
    expect(stdout).toContain(`Downloading release from ${g.url}/update/files/${ids.get("MyApp-1.1.0-full.nupkg")}/MyApp-1.1.0-full.nupkg`);
    expect(stdout).not.toContain("Exception");
  }, 60_000);

  test("an unknown arch is a 400 with the envelope; an arch without packages a 404", async () => {
    const bad = await fetch(`${g.url}/update/squirrel-windows/sparc/RELEASES`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.param).toBe("arch");
    expect((await fetch(`${g.url}/update/squirrel-windows/arm64/RELEASES`)).status).toBe(404);
  });
});

describe("Squirrel.Mac", () => {
  const check = (path: string, headers: Record<string, string> = {}) => fetch(`${g.url}/update/squirrel-mac/${path}`, { headers });

  test("an older app gets {url, name, notes, pub_date} of the zip for its arch; the url serves it", async () => {
    const res = await check("x64/1.0.0");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(doc).toEqual({ url: `${g.url}/update/files/${ids.get("MyApp-1.1.0-mac.zip")}/MyApp-1.1.0-mac.zip`, name: "1.1.0", notes: "Notes of 1.1.0", pub_date: "2026-11-20T10:00:00.000Z" });
    expect(new Uint8Array(await (await fetch(doc.url)).arrayBuffer())).toEqual(new Uint8Array(files["1.1.0"]["MyApp-1.1.0-mac.zip"]));
    expect(((await (await check("arm64/1.0.0")).json()) as any).url).toEndWith("/MyApp-1.1.0-arm64-mac.zip");
  });

  test("204 when up to date; the staged 1.2.0 (universal zip) only for the group", async () => {
    expect((await check("x64/1.1.0")).status).toBe(204);
    const inside = await check("arm64/1.1.0", { "X-App-Client-ID": clientId(true) });
    expect(inside.status).toBe(200);
    expect(((await inside.json()) as any).url).toEndWith("/MyApp-1.2.0-universal-mac.zip");
    expect((await check("arm64/1.1.0", { "X-App-Client-ID": clientId(false) })).status).toBe(204);
  });

  test("bad input is a 400 with the envelope", async () => {
    for (const [path, param] of [["sparc/1.0.0", "arch"], ["x64/newest", "version"]]) {
      const res = await check(path);
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.param).toBe(param);
    }
  });

  test("checks with a client id count as online clients", async () => {
    await pollUntil(async () => ((await (await g.admin("/admin/api/stats/clients")).json()) as any), (s) => (s.byRuntime?.["squirrel-mac"] ?? 0) >= 2 && (s.byRuntime?.["squirrel-windows"] ?? 0) >= 2, { what: "online Squirrel clients" });
  });
});
