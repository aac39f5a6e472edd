/**
 * The /docs page's Markdown reader (src/admin/assets/markdown.browser.js), without a browser: the subset it
 * knows (paragraphs, lists, code, bold, links, fenced blocks) and that nothing in a description becomes
 * markup or a script-running link.
 */
import { describe, expect, test } from "bun:test";

type Inline = { t: "text" | "code"; v: string } | { t: "strong"; children: Inline[] } | { t: "link"; href: string; children: Inline[] };
type Block = { type: "p"; inline: Inline[] } | { type: "ul" | "ol"; items: Inline[][] } | { type: "pre"; text: string };
interface Markdown {
  parseMarkdown(text: string): Block[];
  parseInline(text: string): Inline[];
  safeHref(href: string): string | null;
}

// A path held in a variable: the browser module has no type declarations of its own.
const MARKDOWN_PATH = "../../src/admin/assets/markdown.browser.js";
const md = (await import(MARKDOWN_PATH)) as Markdown;

describe("docs Markdown", () => {
  test("code, bold and links inside a paragraph", () => {
    expect(md.parseMarkdown("Send `Authorization: Bearer <key>` **always**; see [the guide](https://example.com/a).")).toEqual([
      {
        type: "p",
        inline: [
          { t: "text", v: "Send " },
          { t: "code", v: "Authorization: Bearer <key>" },
          { t: "text", v: " " },
          { t: "strong", children: [{ t: "text", v: "always" }] },
          { t: "text", v: "; see " },
          { t: "link", href: "https://example.com/a", children: [{ t: "text", v: "the guide" }] },
          { t: "text", v: "." },
        ],
      },
    ]);
  });

  test("paragraphs, lists and fenced code blocks", () => {
    const blocks = md.parseMarkdown("First line\ncontinues.\n\n- one\n- two `x`\n  more of two\n\n1. first\n2. second\n\n```\n{\"a\": 1}\n```\nLast.");
    expect(blocks.map((b) => b.type)).toEqual(["p", "ul", "ol", "pre", "p"]);
    expect(blocks[0]).toEqual({ type: "p", inline: [{ t: "text", v: "First line continues." }] });
    expect((blocks[1] as { items: Inline[][] }).items).toEqual([
      [{ t: "text", v: "one" }],
      [{ t: "text", v: "two " }, { t: "code", v: "x" }, { t: "text", v: " more of two" }],
    ]);
    expect((blocks[2] as { items: Inline[][] }).items.length).toBe(2);
    expect(blocks[3]).toEqual({ type: "pre", text: '{"a": 1}' });
  });

  test("HTML stays text and script-running links stay text", () => {
    expect(md.parseMarkdown("<script>alert(1)</script> <b>x</b>")).toEqual([{ type: "p", inline: [{ t: "text", v: "<script>alert(1)</script> <b>x</b>" }] }]);
    const link = md.parseInline("[click](javascript:alert(1))");
    expect(link.every((tok) => tok.t === "text")).toBe(true);
    expect(link.map((tok) => (tok as { v: string }).v).join("")).toBe("[click](javascript:alert(1))");
    expect(md.safeHref("javascript:alert(1)")).toBeNull();
    expect(md.safeHref("data:text/html,x")).toBeNull();
    expect(md.safeHref("//evil.example/x")).toBeNull();
    expect(md.safeHref("/openapi.json")).toBe("/openapi.json");
    expect(md.safeHref("#errors")).toBe("#errors");
    expect(md.safeHref("mailto:ops@example.com")).toBe("mailto:ops@example.com");
  });
});
