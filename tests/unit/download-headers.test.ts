import { describe, expect, test } from "bun:test";
import { contentDisposition, contentTypeFor, downloadEtag, ifRangeAllows } from "../../src/site/downloads/rules/download-headers";
import { sanitizeFileName } from "../../src/site/releases/rules/asset-file-name";

describe("sanitizeFileName", () => {
  test("keeps ordinary names", () => {
    expect(sanitizeFileName("Gantry-1.2.3-x64-setup.exe")).toBe("Gantry-1.2.3-x64-setup.exe");
    expect(sanitizeFileName("数据 App.dmg")).toBe("数据 App.dmg");
  });
  test("drops directories, traversal, control and bidi characters, leading dots", () => {
    expect(sanitizeFileName("../../etc/passwd")).toBe("passwd");
    expect(sanitizeFileName("..\\..\\windows\\evil.exe")).toBe("evil.exe");
    expect(sanitizeFileName("a\r\nSet-Cookie: x.exe")).toBe("aSet-Cookie: x.exe");
    expect(sanitizeFileName("evil\u202Eexe.txt")).toBe("evilexe.txt");
    expect(sanitizeFileName(".hidden")).toBe("hidden");
    expect(sanitizeFileName("..")).toBe("");
    expect(sanitizeFileName("dir/")).toBe("");
    expect(sanitizeFileName("x".repeat(500)).length).toBe(200);
  });
});

describe("contentDisposition", () => {
  test("plain ASCII names", () => {
    expect(contentDisposition("web-1.2.0.zip")).toBe(`attachment; filename="web-1.2.0.zip"; filename*=UTF-8''web-1.2.0.zip`);
  });
  test("quotes, backslashes and non-ASCII are made safe in filename and exact in filename*", () => {
    const v = contentDisposition('My "App" 数据 (1)\'s.exe');
    expect(v).toBe(`attachment; filename="My _App_ __ (1)'s.exe"; filename*=UTF-8''My%20%22App%22%20%E6%95%B0%E6%8D%AE%20%281%29%27s.exe`);
    // A backslash is a path separator on Windows: only the last segment is kept.
    expect(contentDisposition("a\\b.exe")).toContain(`filename="b.exe"`);
    expect(v).not.toMatch(/[\r\n]/);
  });
  test("accents fold to ASCII in the fallback", () => {
    expect(contentDisposition("Café.dmg")).toContain(`filename="Cafe.dmg"`);
  });
  test("traversal and header injection never survive", () => {
    const v = contentDisposition("../../x\r\nLocation: evil.exe");
    expect(v).toStartWith(`attachment; filename="xLocation: evil.exe"`);
    expect(v).not.toContain("/");
    expect(contentDisposition("")).toContain(`filename="download"`);
  });
});

describe("validators", () => {
  const hex = "ab".repeat(32);
  test("downloadEtag only from a digest", () => {
    expect(downloadEtag(hex)).toBe(`"sha256-${hex}"`);
    expect(downloadEtag("")).toBeNull();
    expect(downloadEtag("zz")).toBeNull();
  });
  test("If-Range matches only our exact strong tag", () => {
    const tag = downloadEtag(hex);
    expect(ifRangeAllows(null, tag)).toBe(true);
    expect(ifRangeAllows(tag!, tag)).toBe(true);
    expect(ifRangeAllows(`W/${tag}`, tag)).toBe(false);
    expect(ifRangeAllows(`"other"`, tag)).toBe(false);
    expect(ifRangeAllows("Wed, 21 Oct 2015 07:28:00 GMT", tag)).toBe(false);
    expect(ifRangeAllows(tag!, null)).toBe(false);
  });
  test("content types", () => {
    expect(contentTypeFor("zip")).toBe("application/zip");
    expect(contentTypeFor("AppImage")).toBe("application/vnd.appimage");
    expect(contentTypeFor("html")).toBe("application/octet-stream");
  });
});
