/**
 * Sparkle's appcast (issue 35), checked against the elements Sparkle documents: `<item>` with `sparkle:version`,
 * `sparkle:shortVersionString`, `pubDate`, `<enclosure url length type sparkle:edSignature>`, and
 * `sparkle:criticalUpdate sparkle:version` from the minimum app version. The edSignature is checked as Sparkle does:
 * Ed25519 over the archive served at the enclosure's URL, with the key minisign (Debian's) signed it with.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { bytesOf } from "../support/fake-github";
import { minisignKeys, minisignSign, type MinisignKeys } from "../support/minisign";
import { seenFromAnotherProcess } from "../support/other-process";
import { tempDirs } from "../support/temp-dirs";
import { rolloutBucket } from "../../src/site/releases/rules/rollout";

const ROOT = join(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const tempDir = tempDirs();

let g: Gantry;
let dataDir: string;
let filesDir: string;
let keys: MinisignKeys;
const bytes = new Map<string, Uint8Array>();

function file(name: string, size: number): string {
  const b = bytesOf(name, size);
  bytes.set(name, b);
  const path = join(filesDir, name);
  writeFileSync(path, b);
  return path;
}

async function publish(version: string, ...args: string[]): Promise<void> {
  const proc = Bun.spawn([BUN, "src/main.ts", "releases", "publish", version, ...args, "--data-dir", dataDir, "--json"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GANTRY_LOG_LEVEL: "error", GANTRY_RELEASE_PUBLIC_KEY: "" },
  });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
}

/** Sparkle's check: Ed25519 over the archive, with the 32-byte public key (here minisign's, from its key line). */
function ed25519Verifies(data: Uint8Array, signatureB64: string): boolean {
  const raw = Buffer.from(keys.line, "base64").subarray(10);
  const key = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]), format: "der", type: "spki" });
  return verify(null, data, key, Buffer.from(signatureB64, "base64"));
}

const appcast = (query = "", headers: Record<string, string> = {}) => fetch(`${g.url}/update/sparkle/appcast.xml${query}`, { headers });

function clientId(inside: boolean): string {
  for (;;) {
    const id = crypto.randomUUID();
    if (rolloutBucket(id, "1.1.0") < 5000 === inside) return id;
  }
}

beforeAll(async () => {
  dataDir = tempDir("sparkle");
  filesDir = tempDir("sparkle-files");
  keys = minisignKeys(filesDir);
  g = await startGantry({ config: { dataDir }, databasePath: join(dataDir, "gantry.db") });
  const x64 = file("MyApp-1.0.0-mac.zip", 30_000);
  const arm = file("MyApp-1.0.0-arm64-mac.zip", 31_000);
  // Legacy (`Ed`) signatures: Ed25519 over the file, what Sparkle checks.
  minisignSign(keys, x64, { legacy: true });
  minisignSign(keys, arm, { legacy: true });
  await publish("1.0.0", x64, arm, "--notes", "Fixes <things> & more");
  // Prehashed (minisign's default): no edSignature Sparkle could check.
  const dmg = file("MyApp-1.1.0-universal.dmg", 32_000);
  minisignSign(keys, dmg);
  await publish("1.1.0", dmg, "--min-app-version", "1.0.5");
  await seenFromAnotherProcess(async () => (await g.admin("/admin/api/releases/1.1.0")).status, (s) => s === 200, "1.1.0 published");
  expect((await g.admin("/admin/api/releases/1.1.0/rollout", { method: "POST", body: JSON.stringify({ percent: 50 }) })).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await g.stop();
});

describe("the appcast", () => {
  test("one item: versions, pubDate, the enclosure through Gantry with length, type and an edSignature Sparkle's check accepts", async () => {
    const res = await appcast("?arch=arm64");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/rss+xml; charset=utf-8");
    const xml = await res.text();
    const admin = ((await (await g.admin("/admin/api/releases/1.0.0")).json()) as any).assets;
    const id = admin.find((a: any) => a.name === "MyApp-1.0.0-arm64-mac.zip").id;
    const ed = /sparkle:edSignature="([^"]+)"/.exec(xml)![1];
    const published = new Date(((await (await g.admin("/admin/api/releases/1.0.0")).json()) as any).publishedAt).toUTCString();
    expect(xml).toBe(
      [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<rss version="2.0" xmlns:sparkle="http://www.andymatuschak.org/xml-namespaces/sparkle" xmlns:dc="http://purl.org/dc/elements/1.1/">',
        "  <channel>",
        "    <title>Updates</title>",
        "    <item>",
        "      <title>1.0.0</title>",
        `      <pubDate>${published}</pubDate>`,
        "      <sparkle:version>1.0.0</sparkle:version>",
        "      <sparkle:shortVersionString>1.0.0</sparkle:shortVersionString>",
        "      <description>Fixes &lt;things&gt; &amp; more</description>",
        `      <enclosure url="${g.url}/update/files/${id}/MyApp-1.0.0-arm64-mac.zip" length="31000" type="application/zip" sparkle:edSignature="${ed}"/>`,
        "    </item>",
        "  </channel>",
        "</rss>",
        "",
      ].join("\n"),
    );
    const served = new Uint8Array(await (await fetch(`${g.url}/update/files/${id}/MyApp-1.0.0-arm64-mac.zip`)).arrayBuffer());
    expect(served).toEqual(new Uint8Array(bytes.get("MyApp-1.0.0-arm64-mac.zip")!));
    expect(ed25519Verifies(served, ed)).toBe(true);
    expect(ed25519Verifies(bytes.get("MyApp-1.0.0-mac.zip")!, ed)).toBe(false);
  });

  test("arch: x86_64 gets the x64 zip; none given, x64 before arm64; an unknown one is a 400", async () => {
    expect(await (await appcast("?arch=x86_64")).text()).toContain("/MyApp-1.0.0-mac.zip\"");
    expect(await (await appcast()).text()).toContain("/MyApp-1.0.0-mac.zip\"");
    const bad = await appcast("?arch=ppc");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.param).toBe("arch");
  });

  test("a client in the staged rollout (client_id in the feed's query) gets 1.1.0, critical below its minimum app version, without an edSignature for a prehashed signature", async () => {
    const xml = await (await appcast(`?arch=arm64&client_id=${clientId(true)}`)).text();
    expect(xml).toContain("<sparkle:version>1.1.0</sparkle:version>");
    expect(xml).toContain('<sparkle:criticalUpdate sparkle:version="1.0.5"></sparkle:criticalUpdate>');
    expect(xml).toMatch(/<enclosure url="[^"]+\/MyApp-1\.1\.0-universal\.dmg" length="32000" type="application\/x-apple-diskimage"\/>/);
    expect(await (await appcast(`?arch=arm64&client_id=${clientId(false)}`)).text()).toContain("<sparkle:version>1.0.0</sparkle:version>");
    expect(await (await appcast("?arch=arm64", { "X-App-Client-ID": clientId(true) })).text()).toContain("<sparkle:version>1.1.0</sparkle:version>");
  });
});
