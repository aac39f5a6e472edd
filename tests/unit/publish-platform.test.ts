/** `releases publish` and side files: never refused for a platform, never given one, and its help says so. */
import { expect, test } from "bun:test";
import { commandHelp, type Command } from "../../src/cli/command";
import { releasesGroup } from "../../src/cli/releases";
import { parsePublishArgument } from "../../src/site/releases/release-catalog";
import { withPublishPlatform } from "../../src/site/releases/publish-platform";

const SIDE = ["SHA256SUMS.txt", "notes.md", "tool.bin.sha256", "latest-linux.yml", "tool.bin.asc"];

test("--platform and --arch classify the files they are for; side files stay without a platform", () => {
  const sources = withPublishPlatform(["tool.bin", ...SIDE].map((n) => parsePublishArgument(`${n}=https://files.example/${n}`)), { platform: "linux", arch: "x64" });
  expect(sources.map((s) => [s.name, s.classification ?? null])).toEqual([
    ["tool.bin", { platform: "linux", arch: "x64" }],
    ...SIDE.map((n) => [n, null]),
  ]);
});

test("side files alone need no --platform", () => {
  expect(() => withPublishPlatform(SIDE.map((n) => parsePublishArgument(`${n}=`)), {})).not.toThrow();
});

test("releases publish --help says side files carry no platform", () => {
  const publish = releasesGroup.commands.find((c) => c.name === "releases publish") as Command;
  expect(commandHelp(publish).replace(/\s+/g, " ")).toContain("Side files carry no platform or arch, with or without --platform");
});
