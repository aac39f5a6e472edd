/**
 * What a killed writer leaves behind must not get in the way: a `gantry releases sync` SIGKILLed mid-download
 * used to hold the sync lease for 5 minutes (every sync refused meanwhile) and leave its `.part` file in
 * mirror/.tmp until a server start an hour later. Now the lease of a process that no longer runs is taken over
 * at once and its temp file swept by the next write, while a sync that is alive keeps both: its lease refuses a
 * second sync, and a publish running beside it does not touch the file it is writing. Real processes, SIGKILL.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";
import { BUN, MAIN, ROOT, runGantry } from "./serve-process";

const ASSET = new Uint8Array(1024 * 1024).map((_, i) => (i * 31) & 0xff);
/** Sent before the download stalls: the sync's temp file exists and holds these. */
const FIRST_BYTES = 64 * 1024;

/** A GitHub Releases API with one release of one asset, whose download stalls half-way while `stall` is set. */
function startReleaseApi() {
  let stall = true;
  const stalled: Array<() => void> = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/repos/acme/app/releases") {
        const release = {
          id: 1,
          tag_name: "v1.0.0",
          name: "v1.0.0",
          body: "notes",
          draft: false,
          prerelease: false,
          published_at: "2025-01-01T00:00:00Z",
          assets: [{ id: 11, name: "app-1.0.0-linux-x64.tar.gz", size: ASSET.length, state: "uploaded", url: `${url.origin}/assets/11`, browser_download_url: `${url.origin}/download/app.tar.gz` }],
        };
        return Response.json([release]);
      }
      if (url.pathname === "/download/app.tar.gz") {
        if (!stall) return new Response(ASSET);
        // The first bytes, then nothing until the test ends: a download in progress.
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(ASSET.slice(0, FIRST_BYTES));
          },
          pull: () => new Promise<void>((resolve) => stalled.push(resolve)),
        });
        return new Response(body, { headers: { "content-length": String(ASSET.length) } });
      }
      return new Response("not found", { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    set stall(v: boolean) {
      stall = v;
    },
    stop() {
      for (const resume of stalled.splice(0)) resume();
      server.stop(true);
    },
  };
}

const api = startReleaseApi();
const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(async () => {
  for (const p of procs) {
    p.kill("SIGKILL");
    await p.exited;
  }
  api.stop();
});
// Registered after the hook above, so it runs after it: the processes are gone before their directories.
const tempDir = tempDirs();

/** The fake API is on loopback, which syncs refuse unless the operator lists the host. */
const ENV = { GANTRY_ALLOWED_FETCH_HOSTS: "127.0.0.1" };
const syncArgs = (dir: string) => ["releases", "sync", "--github", "acme/app", "--api-url", api.url, "--data-dir", dir];
const tempFiles = (dir: string) => {
  const tmp = join(dir, "mirror", ".tmp");
  return existsSync(tmp) ? readdirSync(tmp).filter((n) => n.endsWith(".part")).map((n) => join(tmp, n)) : [];
};

test("a sync killed mid-download blocks no later sync and its temp file is swept; a live one keeps lease and file", async () => {
  const dir = tempDir("killed-sync");
  expect((await runGantry(["keys", "create", "--name", "k", "--data-dir", dir])).code).toBe(0);

  // A sync that is downloading: its lease is taken and its temp file holds the first bytes.
  const sync = Bun.spawn([BUN, MAIN, ...syncArgs(dir)], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...ENV }, stdout: "ignore", stderr: "ignore" });
  procs.push(sync);
  const { value: [part] } = await pollUntil(() => tempFiles(dir), (f) => f.length === 1 && statSync(f[0]).size >= FIRST_BYTES, {
    timeoutMs: 15_000,
    what: "the sync's temp file with the first bytes",
  });

  // While it lives, its lease refuses a second sync...
  const second = await runGantry(syncArgs(dir), ENV);
  expect(second.code).not.toBe(0);
  expect(second.err).toContain("another release sync is running");
  // ...and a publish beside it (which sweeps before it writes) leaves its file alone.
  const file = join(tempDir("killed-sync-file"), "app-0.9.0-linux-x64.tar.gz");
  writeFileSync(file, "a local build");
  const published = await runGantry(["releases", "publish", "0.9.0", file, "--data-dir", dir]);
  expect(published.err).toBe("");
  expect(published.code).toBe(0);
  expect(existsSync(part)).toBe(true);

  sync.kill("SIGKILL");
  await sync.exited;
  expect(existsSync(part)).toBe(true);

  // The next sync runs at once (the holder is gone), sweeps what the killed one left and mirrors the asset.
  api.stall = false;
  const next = await runGantry([...syncArgs(dir), "--json"], ENV);
  expect(next.err).toBe("");
  expect(next.code).toBe(0);
  expect(JSON.parse(next.out).downloaded).toEqual([{ version: "v1.0.0", name: "app-1.0.0-linux-x64.tar.gz", bytes: ASSET.length }]);
  expect(tempFiles(dir)).toEqual([]);
}, 60_000);
