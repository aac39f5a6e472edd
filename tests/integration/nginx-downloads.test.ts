/**
 * The nginx example of docs/deploying.md ("Behind nginx with a cache"), run as written (cache path, port and
 * Gantry's address replaced) in front of Gantry: download links must reach Gantry untouched — a HEAD stays a HEAD
 * (no download counted, the link still serves), a Range request gets its 206. The same configuration without the
 * two `proxy_cache off` lines is run too, to show why they are there (nginx then sends whole files).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nginxAvailable, nginxBinary, nginxTempPaths } from "../../bench/servers";
import { freePort } from "../reliability/serve-process";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";

const SIZE = 200_000;
const data = crypto.getRandomValues(new Uint8Array(SIZE));
const unavailable = nginxAvailable() ? null : "nginx is not installed (.ci/system-deps installs nginx-light)";

/** The ```nginx block of docs/deploying.md. */
function documentedConfig(): string {
  const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "deploying.md"), "utf8");
  const block = /```nginx\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/deploying.md has no nginx block");
  return block[1]!;
}

interface Nginx {
  url: string;
  stop(): Promise<void>;
}

async function startNginx(site: string, gantry: Gantry, name: string): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), `gantry-nginx-${name}-`));
  mkdirSync(join(dir, "tmp"), { recursive: true });
  const port = freePort();
  const origin = new URL(gantry.url).host;
  const config = site
    .replace(/\/var\/cache\/nginx\/gantry/g, join(dir, "cache"))
    .replace(/http:\/\/127\.0\.0\.1:8080/g, `http://${origin}`)
    .replace("listen 80;", `listen 127.0.0.1:${port};`);
  writeFileSync(
    join(dir, "nginx.conf"),
    `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
${nginxTempPaths(dir)}
${config}
}
`,
  );
  const proc = Bun.spawn([nginxBinary(), "-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], { stdout: "ignore", stderr: "pipe" });
  const url = `http://127.0.0.1:${port}`;
  await pollUntil(() => fetch(`${url}/healthz`).then((r) => r.status, () => 0), (s) => s === 200, { timeoutMs: 20_000, what: `nginx (${name}) answering` });
  return {
    url,
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

if (unavailable) {
  test.skip(`nginx in front of downloads: ${unavailable}`, () => {});
} else {
  let g: Gantry;
  let uploads = 0;
  let documented: Nginx;
  let cachedEverywhere: Nginx;

  beforeAll(async () => {
    g = await startGantry({ config: { downloadTokenTtlSeconds: 600, s3RedirectDownloads: false } });
    await g.deps.releases.catalog.create("1.0.0", {}, true);
    const site = documentedConfig();
    expect(site.match(/proxy_cache off;/g)?.length).toBe(2);
    documented = await startNginx(site, g, "documented");
    cachedEverywhere = await startNginx(site.replace(/\n\s*proxy_cache off;/g, ""), g, "cached");
  }, 60_000);

  afterAll(async () => {
    await documented?.stop();
    await cachedEverywhere?.stop();
    await g?.stop();
  });

  /** Each check gets a file of its own, so download counts (deduplicated per client and file) tell them apart. */
  async function freshAsset(): Promise<number> {
    const name = `Gantry-1.0.0-x64-setup-${++uploads}.exe`;
    return (await g.deps.releases.catalog.upload("1.0.0", name, new Blob([data]).stream(), SIZE)).id;
  }

  async function downloads(assetId: number): Promise<number> {
    const r = (await (await g.admin("/admin/api/releases/1.0.0")).json()) as { assets: Array<{ id: number; downloads: number }> };
    return r.assets.find((a) => a.id === assetId)!.downloads;
  }

  /** A /dl/ link minted through nginx (the redirect names nginx's address: Host is passed on). */
  async function link(base: string, assetId: number): Promise<string> {
    const res = await fetch(`${base}/api/v1/download/${assetId}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    expect(location.startsWith(`${base}/dl/`)).toBe(true);
    return location;
  }

  describe("the documented configuration (proxy_cache off for /dl/ and /api/v1/download/)", () => {
    test("a HEAD of a link stays a HEAD: no download counted, and the same link then serves the file", async () => {
      const id = await freshAsset();
      const url = await link(documented.url, id);
      const head = await fetch(url, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe(String(SIZE));
      const full = await fetch(url);
      expect(full.status).toBe(200);
      expect(new Uint8Array(await full.arrayBuffer())).toEqual(data);
      // Exactly one: the GET's (a HEAD turned into a GET would have counted first, or spent the link).
      await pollUntil(() => downloads(id), (n) => n === 1, { what: "the download counted" });
      expect(await downloads(id)).toBe(1);
    });

    test("a Range request gets 206 with just those bytes", async () => {
      const id = await freshAsset();
      const url = await link(documented.url, id);
      const res = await fetch(url, { headers: { range: "bytes=1000-1099" } });
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe(`bytes 1000-1099/${SIZE}`);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(data.slice(1000, 1100));
      // A resume at the end of a broken download, on the same link.
      const tail = await fetch(url, { headers: { range: `bytes=${SIZE - 10}-` } });
      expect(tail.status).toBe(206);
      expect(new Uint8Array(await tail.arrayBuffer())).toEqual(data.slice(SIZE - 10));
      // And the whole file after that, on the same link.
      const full = await fetch(url);
      expect(full.status).toBe(200);
      expect(new Uint8Array(await full.arrayBuffer())).toEqual(data);
    });

    test("documents go through whole and current (nginx stores none: they say no-cache)", async () => {
      for (const headers of [{}, { "if-none-match": '"stale"' }] as Array<Record<string, string>>) {
        const res = await fetch(`${documented.url}/api/v1/latest`, { headers });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { version: string }).version).toBe("1.0.0");
      }
      await g.deps.releases.catalog.create("1.1.0", {}, true);
      await g.deps.releases.catalog.upload("1.1.0", "Gantry-1.1.0-x64-setup.exe", new Blob([data]).stream(), SIZE);
      const next = await fetch(`${documented.url}/api/v1/latest`);
      expect(((await next.json()) as { version: string }).version).toBe("1.1.0");
    });
  });

  describe("why: the same configuration with the cache left on for downloads", () => {
    test("a HEAD reaches Gantry as a GET of the whole file: a download counted that never happened", async () => {
      const id = await freshAsset();
      const head = await fetch(await link(cachedEverywhere.url, id), { method: "HEAD" });
      expect(head.status).toBe(200);
      await pollUntil(() => downloads(id), (n) => n === 1, { what: "the HEAD counted as a download" });
    });

    test("a Range request reaches Gantry without its Range: the whole file is sent upstream (and counted)", async () => {
      const id = await freshAsset();
      const ranged = await fetch(await link(cachedEverywhere.url, id), { headers: { range: "bytes=1000-1099" } });
      // nginx may cut the range itself from the whole file it fetched; Gantry sent all of it either way.
      await ranged.arrayBuffer();
      await pollUntil(() => downloads(id), (n) => n === 1, { what: "the ranged request counted as a whole download" });
    });
  });
}
