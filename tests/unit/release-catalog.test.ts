import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors";
import { checkClassification, checkReleaseMeta, parsePublishArgument } from "../../src/site/releases/release-catalog";

describe("publish arguments", () => {
  test("local paths and NAME=URL pairs", () => {
    expect(parsePublishArgument("dist/Gantry-1.2.0-x64-setup.exe")).toEqual({ kind: "file", path: "dist/Gantry-1.2.0-x64-setup.exe", name: "Gantry-1.2.0-x64-setup.exe" });
    expect(parsePublishArgument("app.dmg=https://example.com/a.dmg")).toEqual({ kind: "url", name: "app.dmg", url: "https://example.com/a.dmg" });
    expect(parsePublishArgument("app.dmg=")).toEqual({ kind: "url", name: "app.dmg", url: "" });
    // A path that merely contains '=' stays a path.
    expect(parsePublishArgument("dist/a=b.zip")).toEqual({ kind: "file", path: "dist/a=b.zip", name: "a=b.zip" });
    expect(parsePublishArgument("a=b.zip")).toEqual({ kind: "file", path: "a=b.zip", name: "a=b.zip" });
  });
  test("refused: non-http URLs and names with nothing left", () => {
    expect(() => parsePublishArgument("x.exe=ftp://example.com/x.exe")).toThrow(AppError);
    expect(() => parsePublishArgument("x.exe=file:///etc/passwd")).toThrow(AppError);
    expect(() => parsePublishArgument("..=https://example.com/x")).toThrow(AppError);
  });
});

describe("metadata and classification checks", () => {
  test("versions and dates", () => {
    expect(checkReleaseMeta({ minAppVersion: "v1.2", publishedAt: "2025-03-01T10:00:00+02:00" })).toEqual({ minAppVersion: "v1.2", publishedAt: "2025-03-01T08:00:00.000Z" });
    expect(checkReleaseMeta({ minAppVersion: "" })).toEqual({ minAppVersion: "" });
    expect(() => checkReleaseMeta({ minAppVersion: "latest" })).toThrow(AppError);
    expect(() => checkReleaseMeta({ publishedAt: "yesterday" })).toThrow(AppError);
  });
  test("classification values are normalised like query values", () => {
    expect(checkClassification({ platform: "darwin", arch: "aarch64", fileType: ".APPIMAGE" })).toEqual({ platform: "macos", arch: "arm64", fileType: "AppImage" });
    expect(checkClassification({ arch: "" })).toEqual({ arch: "" });
    expect(() => checkClassification({ platform: "beos" })).toThrow(AppError);
  });
});
