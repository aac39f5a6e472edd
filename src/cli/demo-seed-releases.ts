/**
 * Sample releases for `gantry demo`: two versions with small generated files (a few KB each) in the mirror,
 * so the latest document, recommendations, downloads and the legacy manifest can be tried offline.
 * Returns the curl lines that show them.
 */
import type { AppDeps } from "../deps";
import { storedFields } from "../site/releases/asset-digests";
import { classifyAsset } from "../site/releases/rules/classify";

const DAY_MS = 86_400_000;

/** Deterministic filler bytes: distinct per file, so every asset has its own SHA-256. */
function sampleBytes(name: string, size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  const header = new TextEncoder().encode(`Gantry demo file: ${name}\n`);
  out.set(header.subarray(0, size));
  let x = [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  for (let i = header.length; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

export async function seedDemoReleases(deps: AppDeps): Promise<(base: string) => string> {
  const { store, mirror } = deps.releases;
  const now = deps.now();
  const samples = [
    {
      version: "1.1.0",
      notes: "First demo release.",
      publishedAt: new Date(now - 30 * DAY_MS).toISOString(),
      minAppVersion: "",
      files: ["Gantry-1.1.0-x64-setup.exe", "Gantry-1.1.0-arm64.dmg", "web-1.1.0.zip"],
    },
    {
      version: "1.2.0",
      notes: "Faster start-up, a new settings page and fixes.",
      publishedAt: new Date(now - 2 * DAY_MS).toISOString(),
      minAppVersion: "1.0.0",
      files: [
        "Gantry-1.2.0-x64-setup.exe",
        "Gantry-1.2.0-x64.msi",
        "Gantry-1.2.0-arm64.dmg",
        "Gantry-1.2.0-x64.dmg",
        "Gantry-1.2.0-x86_64.AppImage",
        "gantry_1.2.0_amd64.deb",
        "web-1.2.0.zip",
      ],
    },
  ];

  for (const sample of samples) {
    const existing = await store.get(sample.version);
    if (existing) await store.delete(existing.id);
    const assets = [];
    for (const [i, name] of sample.files.entries()) {
      const stored = await mirror.put(new Blob([sampleBytes(name, 2048 + i * 1024)]).stream());
      assets.push({ name, classification: classifyAsset(name), fields: { ...storedFields(stored), mirrored: true } });
    }
    const release = { version: sample.version, notes: sample.notes, publishedAt: sample.publishedAt, minAppVersion: sample.minAppVersion };
    await store.publish({ create: release, change: release }, assets);
  }
  const latest = (await store.get("1.2.0"))!;
  const exe = latest.assets.find((a) => a.name.endsWith("x64-setup.exe"))!;

  return (base: string) =>
    [
      "Releases (latest document, filtered; a download is a 302 to a short-lived /dl/ link):",
      `  curl -s ${base}/api/v1/latest`,
      `  curl -s '${base}/api/v1/latest?platform=macos&arch=aarch64'`,
      `  curl -sI ${base}/api/v1/download/${exe.id}`,
      `  curl -sL -o ${exe.name} ${base}/api/v1/download/${exe.id} && sha256sum ${exe.name}`,
      `  curl -s ${base}/update/latest.json`,
      "Release admin (admin token):",
      `  curl -s ${base}/admin/api/releases -H "Authorization: Bearer $GANTRY_ADMIN_TOKEN"`,
    ].join("\n");
}
