/** The rendered latest documents are cached, and any change to releases, from any process, shows at once. */
import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGantry } from "../support/harness";

test("a publish by the CLI in another process is seen by the next request", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gantry-latest-cache-"));
  const g = await startGantry({ config: { dataDir: dir }, databasePath: join(dir, "gantry.db") });
  const publish = (version: string) => {
    const file = join(dir, `web-${version}.zip`);
    writeFileSync(file, `bundle ${version}`);
    const r = Bun.spawnSync(["./node_modules/.bin/bun", "src/main.ts", "releases", "publish", version, file, "--data-dir", dir]);
    expect(r.exitCode).toBe(0);
  };
  try {
    publish("1.0.0");
    const first = await fetch(`${g.url}/api/v1/latest`);
    const etag1 = first.headers.get("etag")!;
    expect(((await first.json()) as any).version).toBe("1.0.0");
    // Served from the cache: same tag, and a 304 for a client that has it.
    expect((await fetch(`${g.url}/api/v1/latest`, { headers: { "if-none-match": etag1 } })).status).toBe(304);
    expect(((await (await fetch(`${g.url}/update/latest.json`)).json()) as any).version).toBe("1.0.0");

    publish("1.1.0");
    const second = await fetch(`${g.url}/api/v1/latest`, { headers: { "if-none-match": etag1 } });
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
