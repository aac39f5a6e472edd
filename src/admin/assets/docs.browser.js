// The API docs page: reads /openapi.json and renders operations grouped by tag, with parameters, request
// bodies and responses. Descriptions are Markdown (OpenAPI's rule), shown through our small safe reader.
// Served as /docs/assets/docs.js; no third-party renderer, nothing from a CDN.
import { renderMarkdown } from "./markdown.js";

function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

/** A compact, readable outline of a JSON Schema: `field: type — description`, nested. */
function outline(schema, depth) {
  if (!schema || depth > 6) return "";
  const pad = "  ".repeat(depth);
  const options = schema.anyOf || schema.oneOf;
  if (options) {
    // Only unions of shapes get an outline; `string | null` is said by the type name alone.
    if (!options.some(hasShape)) return "";
    return options.map((s) => pad + "- " + typeName(s) + "\n" + (hasShape(s) ? outline(s, depth + 1) : "")).join("");
  }
  if (schema.type === "array" && schema.items) return outline(schema.items, depth);
  if (!schema.properties) return "";
  const required = new Set(schema.required || []);
  let out = "";
  for (const [name, prop] of Object.entries(schema.properties)) {
    // The outline is plain text: Markdown's code and bold marks are dropped, their words kept.
    const desc = prop.description ? "  — " + prop.description.replace(/`([^`]+)`/g, "$1").replace(/\*\*(.+?)\*\*/g, "$1") : "";
    const ex = prop.examples ? "  e.g. " + prop.examples.join(", ") : "";
    out += pad + name + (required.has(name) ? "" : "?") + ": " + typeName(prop) + desc + ex + "\n";
    const inner = prop.type === "array" ? prop.items : prop;
    if (hasShape(inner)) out += outline(inner, depth + 1);
  }
  return out;
}

function hasShape(s) {
  if (!s) return false;
  if (s.properties) return true;
  if (s.type === "array") return hasShape(s.items);
  return !!(s.anyOf || s.oneOf || []).some(hasShape);
}

function typeName(s) {
  if (!s) return "any";
  if (s.title) return s.title;
  if (s.const !== undefined) return JSON.stringify(s.const);
  const options = s.anyOf || s.oneOf;
  if (options) return options.map(typeName).join(" | ");
  if (s.type === "array") {
    const item = typeName(s.items);
    return (item.includes(" | ") ? "(" + item + ")" : item) + "[]";
  }
  return s.type || "object";
}

function bodySection(title, content) {
  if (!content) return null;
  const parts = [];
  for (const [type, media] of Object.entries(content)) {
    const text = outline(media.schema, 0);
    parts.push(el("div", null, el("div", "muted", type), text ? el("pre", "schema", text) : null));
  }
  return el("div", null, el("h3", null, title), ...parts);
}

function operation(path, method, op) {
  const params = (op.parameters || []).map((p) =>
    el("tr", null, el("td", "mono nowrap", p.name), el("td", null, p.in), el("td", null, p.required ? "required" : "optional"), el("td", null, p.description ? renderMarkdown(p.description) : "")),
  );
  const responses = Object.entries(op.responses || {}).map(([status, r]) =>
    el("div", "response", el("strong", null, status), r.description ? renderMarkdown(r.description) : null, r.content ? bodySection("", r.content) : null),
  );
  return el(
    "details",
    "op",
    el("summary", null, el("span", "method " + method, method), el("code", null, path), el("span", "muted", op.summary || "")),
    el(
      "div",
      "body",
      op.description ? renderMarkdown(op.description) : null,
      op.security ? el("p", "muted", "Needs ", el("code", null, "Authorization: Bearer <API key>"), ".") : null,
      params.length ? el("div", null, el("h3", null, "Parameters"), el("div", "table-wrap", el("table", null, el("tbody", null, ...params)))) : null,
      op.requestBody ? bodySection("Request body", op.requestBody.content) : null,
      responses.length ? el("div", null, el("h3", null, "Responses"), ...responses) : null,
    ),
  );
}

async function main() {
  const root = document.getElementById("docs");
  const doc = await (await fetch("/openapi.json")).json();
  const groups = new Map();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = (op.tags && op.tags[0]) || "Other";
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag).push(operation(path, method, op));
    }
  }
  root.replaceChildren(el("h1", null, doc.info.title + " ", el("span", "muted", doc.info.version)), doc.info.description ? renderMarkdown(doc.info.description) : null);
  const tagText = new Map((doc.tags || []).map((t) => [t.name, t.description]));
  for (const [tag, ops] of groups) {
    const about = tagText.get(tag);
    root.append(el("section", null, el("h2", null, tag), about ? renderMarkdown(about) : null, ...ops));
  }
}

main().catch((err) => {
  document.getElementById("docs").textContent = "Could not load /openapi.json: " + err.message;
});
