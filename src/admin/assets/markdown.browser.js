// A small, safe Markdown reader for the descriptions of the OpenAPI document (the /docs page): paragraphs,
// bullet and numbered lists, fenced code blocks, `code`, **bold** and [links](https://…). Nothing else.
// Safety: the text is never parsed as HTML. Every piece becomes a text node or an element we create, so
// `<script>` in a description shows as those characters; links keep only http(s), mailto and same-site
// addresses. parseMarkdown is pure (tested without a browser); renderMarkdown builds the DOM.
// Served as /docs/assets/markdown.js.

/** text -> blocks: { type: "p", inline } | { type: "ul" | "ol", items: inline[] } | { type: "pre", text }. */
export function parseMarkdown(text) {
  const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
  const blocks = [];
  let para = null;
  let list = null;
  const endPara = () => {
    if (para) blocks.push({ type: "p", inline: parseInline(para.join(" ")) });
    para = null;
  };
  const endList = () => {
    if (list) blocks.push({ type: list.type, items: list.items.map((item) => parseInline(item)) });
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*```/.test(line)) {
      endPara();
      endList();
      const code = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i]);
      blocks.push({ type: "pre", text: code.join("\n") });
      continue;
    }
    const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (bullet || numbered) {
      endPara();
      const type = bullet ? "ul" : "ol";
      if (list && list.type !== type) endList();
      list ??= { type, items: [] };
      list.items.push((bullet || numbered)[1]);
      continue;
    }
    if (line.trim() === "") {
      endPara();
      endList();
      continue;
    }
    // An indented line under a list item continues it; anything else ends the list.
    if (list && /^\s+/.test(line)) {
      list.items[list.items.length - 1] += " " + line.trim();
      continue;
    }
    endList();
    (para ??= []).push(line.trim());
  }
  endPara();
  endList();
  return blocks;
}

const INLINE = /`([^`]+)`|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;

/** One line of text -> [{ t: "text", v } | { t: "code", v } | { t: "strong", children } | { t: "link", href, children }]. */
export function parseInline(text) {
  const out = [];
  let at = 0;
  for (const m of String(text).matchAll(INLINE)) {
    if (m.index > at) out.push({ t: "text", v: text.slice(at, m.index) });
    if (m[1] !== undefined) out.push({ t: "code", v: m[1] });
    else if (m[2] !== undefined) out.push({ t: "strong", children: parseInline(m[2]) });
    else {
      const href = safeHref(m[4]);
      const children = parseInline(m[3]);
      out.push(href ? { t: "link", href, children } : { t: "text", v: m[0] });
    }
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ t: "text", v: text.slice(at) });
  return out;
}

/** Only addresses that cannot run script: http(s), mailto, and paths or anchors of this site. */
export function safeHref(href) {
  const v = String(href).trim();
  if (/^(https?:|mailto:)/i.test(v)) return v;
  if (/^(\/(?!\/)|#)/.test(v)) return v;
  return null;
}

function inlineNodes(tokens) {
  return tokens.map((tok) => {
    if (tok.t === "text") return document.createTextNode(tok.v);
    const el = document.createElement(tok.t === "code" ? "code" : tok.t === "strong" ? "strong" : "a");
    if (tok.t === "code") el.textContent = tok.v;
    else el.append(...inlineNodes(tok.children));
    if (tok.t === "link") {
      el.href = tok.href;
      if (/^https?:/i.test(tok.href)) el.rel = "noopener noreferrer";
    }
    return el;
  });
}

/** Markdown text -> a fragment of elements (inside a <div class="md">). */
export function renderMarkdown(text) {
  const box = document.createElement("div");
  box.className = "md";
  for (const block of parseMarkdown(text)) {
    if (block.type === "pre") {
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      code.textContent = block.text;
      pre.append(code);
      box.append(pre);
    } else if (block.type === "p") {
      const p = document.createElement("p");
      p.append(...inlineNodes(block.inline));
      box.append(p);
    } else {
      const list = document.createElement(block.type);
      for (const item of block.items) {
        const li = document.createElement("li");
        li.append(...inlineNodes(item));
        list.append(li);
      }
      box.append(list);
    }
  }
  return box;
}
