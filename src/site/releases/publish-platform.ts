/**
 * `gantry releases publish` and files whose platform the name does not tell (`tool.bin`, `app-1.0.zip`). Such a
 * file would be published with no platform: no platform-filtered latest document and no recommendation would ever
 * offer it, silently. So the publish is refused with the flags that fix it, unless they are given.
 *
 * Decisions:
 * - `--platform` and `--arch`, when given, classify every FILE of that command but its side files (as `releases
 *   classify` would, and kept by later re-publishes and syncs); files of other platforms go in a command of their own.
 * - `--platform` without `--arch` is refused for every platform but `web` (whose bundles are `universal`): a
 *   guessed x64 would offer the file to the wrong machines.
 * - Side files carry no platform by nature (checksums, signatures, notes, update metadata, blockmaps) and are
 *   published without one, also when --platform is given: a SHA256SUMS.txt classified linux would show up in a
 *   platform-filtered document as if it were something to install.
 */
import { AppError } from "../../errors";
import { classifyAsset } from "./rules/classify";
import { checkClassification, type PublishSource } from "./release-catalog";

const SIDE_FILE_TYPES = new Set(["blockmap", "yml", "yaml", "json", "xml", "txt", "md", "sig", "minisig", "asc", "sha256", "sha512"]);

/** A checksum, signature, notes, update metadata or blockmap file: by its type, never a platform of its own. */
export function isSideFile(name: string): boolean {
  return SIDE_FILE_TYPES.has(classifyAsset(name).fileType);
}

/** Whether a file needs the operator to name its platform: the name does not tell and it is not a side file. */
export function platformUnknown(name: string): boolean {
  return classifyAsset(name).platform === "" && !isSideFile(name);
}

/** Sources with the operator's classification attached, or a 400 naming the files and the flags to give. */
export function withPublishPlatform(sources: PublishSource[], flags: { platform?: string; arch?: string }): PublishSource[] {
  if (flags.platform === undefined) {
    if (flags.arch !== undefined) throw new AppError("invalid_request", "--arch needs --platform.", { param: "platform" });
    const unknown = sources.filter((s) => platformUnknown(s.name)).map((s) => s.name);
    if (unknown.length === 0) return sources;
    throw new AppError(
      "invalid_request",
      `The platform of ${unknown.map((n) => `'${n}'`).join(", ")} cannot be derived from the file name: ` +
        "give --platform (windows, macos, linux, web) and --arch (x64, arm64, x86, universal), or rename the file.",
      { param: "platform" },
    );
  }
  const checked = checkClassification({ platform: flags.platform, arch: flags.arch });
  if (!checked.platform) throw new AppError("invalid_request", "--platform cannot be empty.", { param: "platform" });
  if (checked.platform === "web") checked.arch = checked.arch || "universal";
  if (!checked.arch) throw new AppError("invalid_request", `--platform ${checked.platform} needs --arch (x64, arm64, x86, universal).`, { param: "arch" });
  return sources.map((s) => (isSideFile(s.name) ? s : { ...s, classification: { platform: checked.platform, arch: checked.arch } }));
}
