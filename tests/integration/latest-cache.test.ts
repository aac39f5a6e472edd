/** The rendered latest documents are cached; a change made through this server shows at once, one made by another process within GENERATION_POLL_MS. */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startGantry } from "../support/harness";
import { seenFromAnotherProcess } from "../support/other-process";
import { tempDirs } from "../support/temp-dirs";

const tempDir = tempDirs();

test("a publish by the CLI in another process is seen within a tenth of a second (plus a loaded machine's margin)", async () => {
  const dir = tempDir("latest-cache");
  const g = await startGantry({ config: { dataDir: dir }, databasePath: join(dir, "gantry.db") });
  const publish = (version: string) => {
    const file = join(dir, `web-${version}.zip`);
    writeFileSync(file, `bundle ${version}`);
    const r = Bun.spawnSync(["./node_modules/.bin/bun", "src/main.ts", "releases", "publish", version, file, "--data-dir", dir]);
    expect(r.exitCode).toBe(0);
  };
  try {
    publish("1.0.0");
    const first = await seenFromAnotherProcess(
      async () => {
        const res = await fetch(`${g.url}/api/v1/latest`);
        return { etag: res.headers.get("etag")!, doc: (await res.json()) as any };
      },
      (r) => r.doc.version === "1.0.0",
      "the first release",
    );
    const etag1 = first.etag;
    // Served from the cache: same tag, and a 304 for a client that has it.
    expect((await fetch(`${g.url}/api/v1/latest`, { headers: { "if-none-match": etag1 } })).status).toBe(304);
    expect(((await (await fetch(`${g.url}/update/latest.json`)).json()) as any).version).toBe("1.0.0");

    publish("1.1.0");
    // Another process's change is seen through the generation counter, read at most every GENERATION_POLL_MS.
    const second = await seenFromAnotherProcess(
      () => fetch(`${g.url}/api/v1/latest`, { headers: { "if-none-match": etag1 } }),
      (res) => res.status !== 304,
      "the cached ETag to stop matching",
    );
    expect(second.status).toBe(200);
    expect(((await second.json()) as any).version).toBe("1.1.0");
    expect(((await (await fetch(`${g.url}/update/latest.json`)).json()) as any).version).toBe("1.1.0");

    // Different hosts and filters are different documents.
    const other = (await (await fetch(`${g.url}/api/v1/latest?platform=web`, { headers: { host: "updates.example.com" } })).json()) as any;
    expect(other.assets.every((a: any) => a.downloadUrl.startsWith("https://updates.example.com/"))).toBe(true);
  } finally {
    await g.stop();
  }
});

test("a change made through this server is seen by the very next request", async () => {
  const g = await startGantry();
  try {
    const publish = (version: string) =>
      g.admin("/admin/api/releases", {
        method: "POST",
        body: JSON.stringify({ version, assets: [{ name: `app-${version}-win-x64.exe`, url: `https://example.com/${version}.exe` }] }),
      });
    expect((await publish("2.0.0")).status).toBe(201);
    expect(((await (await fetch(`${g.url}/api/v1/latest`)).json()) as any).version).toBe("2.0.0");
    // Cached now; the next publish and delete must each show at once, with no wait for the poll.
    expect((await publish("2.1.0")).status).toBe(201);
    expect(((await (await fetch(`${g.url}/api/v1/latest`)).json()) as any).version).toBe("2.1.0");
    expect((await g.admin("/admin/api/releases/2.1.0", { method: "DELETE" })).status).toBeLessThan(300);
    expect(((await (await fetch(`${g.url}/api/v1/latest`)).json()) as any).version).toBe("2.0.0");
  } finally {
    await g.stop();
  }
});
