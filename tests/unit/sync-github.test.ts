import { describe, expect, test } from "bun:test";
import { firstPageUrl, isValidRepo, parseLinkNext } from "../../src/site/releases/sync-github";

describe("GitHub listing helpers", () => {
  test("parseLinkNext", () => {
    const h = '<https://api.github.com/repositories/1/releases?per_page=100&page=2>; rel="next", <https://api.github.com/repositories/1/releases?per_page=100&page=5>; rel="last"';
    expect(parseLinkNext(h)).toBe("https://api.github.com/repositories/1/releases?per_page=100&page=2");
    expect(parseLinkNext('<https://x/?page=1>; rel="prev", <https://x/?page=3>; rel="last"')).toBeNull();
    expect(parseLinkNext('<https://x/?a=1,2>; rel="next"')).toBe("https://x/?a=1,2");
    expect(parseLinkNext('<https://x/2>; rel="prev next"')).toBe("https://x/2");
    expect(parseLinkNext(null)).toBeNull();
    expect(parseLinkNext("garbage")).toBeNull();
  });

  test("isValidRepo", () => {
    expect(isValidRepo("acme/app")).toBe(true);
    expect(isValidRepo("my.org/my_app-2")).toBe(true);
    for (const bad of ["acme", "acme/app/x", "../app", "acme/..", "acme/app?x", "acme /app", ""]) expect(isValidRepo(bad)).toBe(false);
  });

  test("firstPageUrl asks for 100 per page", () => {
    expect(firstPageUrl({ apiUrl: "https://ghe.example.com/api/v3/", repo: "acme/app" })).toBe(
      "https://ghe.example.com/api/v3/repos/acme/app/releases?per_page=100",
    );
  });
});
