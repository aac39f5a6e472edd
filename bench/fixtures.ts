/**
 * What the servers serve: a release catalogue published with the real CLI (older releases known by URL, the
 * latest with small mirrored installers and the big file), a few announcements, and the site documents captured
 * from Gantry's own answers so the static baselines send exactly the same bytes.
 */
import { openSync, writeSync, closeSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { gantryCli } from "./servers";

export const BIG_NAME = "bench-client-2.0.0-linux-x64.tar.gz";

/** `size` bytes of random data (random so no layer can compress it away). */
export function writeRandomFile(path: string, size: number): void {
  const fd = openSync(path, "w");
  const chunk = new Uint8Array(1024 * 1024);
  try {
    for (let left = size; left > 0; left -= chunk.length) {
      // getRandomValues fills at most 64 KiB per call.
      for (let off = 0; off < chunk.length; off += 65536) crypto.getRandomValues(chunk.subarray(off, off + 65536));
      writeSync(fd, chunk, 0, Math.min(chunk.length, left));
    }
  } finally {
    closeSync(fd);
  }
}

export async function publishCatalogue(dataDir: string, workDir: string, bigSize: number, olderReleases: number): Promise<string> {
  const files = join(workDir, "release-files");
  mkdirSync(files, { recursive: true });
  for (let i = 0; i < olderReleases; i++) {
    const v = `1.${i}.0`;
    const names = [`bench-client-${v}-windows-x64.exe`, `bench-client-${v}-macos-arm64.dmg`, `bench-client-${v}-macos-x64.dmg`, `bench-client-${v}-linux-x86_64.AppImage`];
    await gantryCli(["releases", "publish", v, ...names.map((n) => `${n}=https://downloads.example.com/${v}/${n}`), "--notes", `Release ${v}.`], dataDir);
  }
  const small = ["bench-client-2.0.0-windows-x64.exe", "bench-client-2.0.0-windows-arm64.exe", "bench-client-2.0.0-macos-arm64.dmg", "bench-client-2.0.0-macos-x64.dmg", "bench-client-2.0.0-linux-x86_64.AppImage"];
  for (const n of small) writeRandomFile(join(files, n), 256 * 1024);
  const big = join(files, BIG_NAME);
  writeRandomFile(big, bigSize);
  await gantryCli(["releases", "publish", "2.0.0", ...small.map((n) => join(files, n)), big, "--notes", "The benchmark release."], dataDir);
  return big;
}

export async function createAnnouncements(dataDir: string): Promise<void> {
  const items = [
    ["--title", "Maintenance on Sunday", "--body", "The update server restarts at 02:00 UTC.", "--level", "warning", "--expires-at", "2099-01-01T00:00:00Z"],
    ["--title", "Version 2.0 is out", "--body", "Faster sync and a new editor.", "--cta-text", "Read more", "--cta-url", "https://example.com/2.0", "--locale-text", "de.title=Version 2.0 ist da"],
    ["--title", "Survey", "--body", "Tell us what you think.", "--target-surface", "client", "--min-version", "1.0.0"],
  ];
  for (const args of items) await gantryCli(["announcements", "create", ...args], dataDir);
}

export interface CapturedDocument {
  file: string;
  headers: Record<string, string>;
  bytes: number;
}

/** GETs `url` and saves the body and the headers that a static server would send with it. */
export async function captureDocument(url: string, file: string): Promise<CapturedDocument> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  const body = new Uint8Array(await res.arrayBuffer());
  await Bun.write(file, body);
  const headers: Record<string, string> = {};
  for (const name of ["content-type", "cache-control", "etag"]) {
    const v = res.headers.get(name);
    if (v !== null) headers[name] = v;
  }
  return { file, headers, bytes: body.length };
}
