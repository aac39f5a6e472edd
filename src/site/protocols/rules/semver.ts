/**
 * A release's version as strict SemVer (`MAJOR.MINOR.PATCH[-pre][+build]`), which electron-updater, Tauri and
 * Velopack insist on (pure). Gantry's versions are looser (versions.ts): one or two parts are padded with `.0`
 * (`v1.2` -> `1.2.0`, the same version by Gantry's comparison); four or more parts have no SemVer spelling, so
 * such a release is not offered by these protocols (null).
 */
import { parseVersion } from "../../releases/rules/versions";

export function strictSemver(version: string): string | null {
  const p = parseVersion(version);
  if (!p || p.release.length > 3) return null;
  const parts = [...p.release, 0n, 0n].slice(0, 3).join(".");
  const pre = p.prerelease.length > 0 ? `-${p.prerelease.join(".")}` : "";
  const build = p.build.length > 0 ? `+${p.build.join(".")}` : "";
  return parts + pre + build;
}
