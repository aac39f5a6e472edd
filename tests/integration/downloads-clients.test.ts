/**
 * Downloads driven by real download clients (curl, wget, aria2c from Debian): an interrupted download resumes on
 * the same /dl/ link and completes byte for byte; a multi-connection download counts once, a HEAD or a small
 * probe not at all. Each test speaks as its own client address (127.0.0.1 is a trusted proxy here), since a
 * client's downloads of one file within a link's lifetime count once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { startGantry, type Gantry } from "../support/harness";
import { pollUntil } from "../support/poll";
import { tempDirs } from "../support/temp-dirs";

const SIZE = 12 * 1024 * 1024;
const data = new Uint8Array(SIZE);
for (let i = 0; i < SIZE; i += 65536) crypto.getRandomValues(data.subarray(i, Math.min(SIZE, i + 65536)));
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const DATA_SHA = sha256(data);
const tempDir = tempDirs();

let g: Gantry;
let assetId: number;
const spawned: Bun.Subprocess[] = [];

beforeAll(async () => {
  // The download protocol itself, through Gantry also on the shared backend (an S3 redirect would hand the resume to the bucket).
  g = await startGantry({ config: { downloadTokenTtlSeconds: 600, trustedProxies: ["127.0.0.1"], s3RedirectDownloads: false } });
  await g.deps.releases.catalog.create("1.0.0", {}, true);
  assetId = (await g.deps.releases.catalog.upload("1.0.0", "Gantry-1.0.0-x64-setup.exe", new Blob([data]).stream(), SIZE)).id;
});
afterAll(async () => {
  for (const p of spawned) if (p.exitCode === null) p.kill();
  await g?.stop();
});

function run(cmd: string[]): Bun.Subprocess<"ignore", "pipe", "pipe"> {
  const p = Bun.spawn(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  spawned.push(p);
  return p;
}

async function finish(p: Bun.Subprocess<"ignore", "pipe", "pipe">): Promise<{ code: number; err: string }> {
  const [err, , code] = await Promise.all([new Response(p.stderr).text(), new Response(p.stdout).text(), p.exited]);
  return { code, err };
}

async function downloads(): Promise<number> {
  const r = await (await g.admin("/admin/api/releases/1.0.0")).json();
  return r.assets.find((a: any) => a.id === assetId).downloads;
}

const fileSha = async (path: string) => sha256(new Uint8Array(await Bun.file(path).arrayBuffer()));
const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : 0);

/** Starts a slow download, waits until some (not all) bytes have arrived, and kills the client. */
async function interrupted(cmd: string[], out: string): Promise<number> {
  const p = run(cmd);
  await pollUntil(() => sizeOf(out), (n) => n >= 512 * 1024, { timeoutMs: 20_000, what: "the first bytes on disk" });
  p.kill("SIGKILL");
  await p.exited;
  const got = sizeOf(out);
  expect(got).toBeGreaterThan(0);
  expect(got).toBeLessThan(SIZE);
  return got;
}

describe("interrupted downloads resume on the same link", () => {
  test("wget: follows the redirect, is killed mid-way, `wget -c` on the final /dl/ URL completes the file", async () => {
    const dir = tempDir("wget");
    const out = join(dir, "setup.exe");
    const client = "198.51.100.31";
    const before = await downloads();
    // Learn the final URL the way wget does: from its own redirect log.
    const p = run(["wget", "--max-redirect=1", "-S", "--limit-rate=1m", "--header", `X-Forwarded-For: ${client}`, "-O", out, `${g.url}/api/v1/download/${assetId}`]);
    let log = "";
    const reader = p.stderr.getReader();
    const decoder = new TextDecoder();
    const { value: location } = await pollUntil(
      async () => {
        const { value, done } = await reader.read();
        if (value) log += decoder.decode(value, { stream: true });
        if (done) throw new Error(`wget ended early: ${log}`);
        return /Location: (\S+\/dl\/[A-Za-z0-9_-]+)/.exec(log)?.[1] ?? null;
      },
      (l) => l !== null,
      { timeoutMs: 20_000, what: "wget's redirect" },
    );
    await pollUntil(() => sizeOf(out), (n) => n >= 512 * 1024, { timeoutMs: 20_000, what: "the first bytes on disk" });
    p.kill("SIGKILL");
    reader.releaseLock();
    await p.exited;
    const partial = sizeOf(out);
    expect(partial).toBeLessThan(SIZE);

    const resume = await finish(run(["wget", "-c", "-S", "--header", `X-Forwarded-For: ${client}`, "-O", out, location!]));
    expect(resume.code).toBe(0);
    expect(resume.err).toContain("206 Partial Content");
    expect(resume.err).toContain(`Content-Range: bytes ${partial}-${SIZE - 1}/${SIZE}`);
    expect(sizeOf(out)).toBe(SIZE);
    expect(await fileSha(out)).toBe(DATA_SHA);
    // One download, though two requests sent bytes reaching the end.
    await pollUntil(downloads, (n) => n === before + 1, { what: "the download counted" });
    expect(await downloads()).toBe(before + 1);
  }, 60_000);

  test("curl: killed mid-way, `curl -C -` on the same /dl/ link completes the file", async () => {
    const dir = tempDir("curl");
    const out = join(dir, "setup.exe");
    const client = "198.51.100.32";
    const res = await fetch(`${g.url}/api/v1/download/${assetId}`, { redirect: "manual", headers: { "x-forwarded-for": client } });
    const url = res.headers.get("location")!;
    const header = ["-H", `X-Forwarded-For: ${client}`];
    const partial = await interrupted(["curl", "-sS", "--limit-rate", "1M", ...header, "-o", out, url], out);
    const resume = await finish(run(["curl", "-sS", "-f", "-C", "-", "-D", "-", ...header, "-o", out, url]));
    expect(resume.code).toBe(0);
    expect(sizeOf(out)).toBe(SIZE);
    expect(await fileSha(out)).toBe(DATA_SHA);
    expect(partial).toBeGreaterThan(0);
  }, 60_000);
});

describe("download counts count downloads, not requests", () => {
  test("aria2c -x8 -s8: eight connections, a dozen links, one download", async () => {
    const dir = tempDir("aria2c");
    const client = "198.51.100.41";
    const before = await downloads();
    const done = await finish(
      run(["aria2c", "-x8", "-s8", "-k1M", "--header", `X-Forwarded-For: ${client}`, "--allow-overwrite=true", "-d", dir, "-o", "setup.exe", `${g.url}/api/v1/download/${assetId}`]),
    );
    expect(done.code).toBe(0);
    expect(await fileSha(join(dir, "setup.exe"))).toBe(DATA_SHA);
    await pollUntil(downloads, (n) => n >= before + 1, { what: "the download counted" });
    expect(await downloads()).toBe(before + 1);
  }, 60_000);

  test("a HEAD and a 100-byte probe count nothing; a complete download by another client counts", async () => {
    const dir = tempDir("probe");
    const client = "198.51.100.51";
    const before = await downloads();
    const header = ["-H", `X-Forwarded-For: ${client}`];
    const head = await finish(run(["curl", "-sS", "-f", "-L", "-I", ...header, `${g.url}/api/v1/download/${assetId}`]));
    expect(head.code).toBe(0);
    const probe = await finish(run(["curl", "-sS", "-f", "-L", "--range", "0-99", ...header, "-o", join(dir, "probe"), `${g.url}/api/v1/download/${assetId}`]));
    expect(probe.code).toBe(0);
    expect(sizeOf(join(dir, "probe"))).toBe(100);
    // The whole file by another client afterwards: its count is the only one (had the probes counted, they would
    // show beside it, recorded before it).
    const whole = await finish(run(["curl", "-sS", "-f", "-L", "-H", "X-Forwarded-For: 198.51.100.52", "-o", join(dir, "whole"), `${g.url}/api/v1/download/${assetId}`]));
    expect(whole.code).toBe(0);
    expect(await fileSha(join(dir, "whole"))).toBe(DATA_SHA);
    await pollUntil(downloads, (n) => n >= before + 1, { what: "the download counted" });
    expect(await downloads()).toBe(before + 1);
  }, 60_000);
});
